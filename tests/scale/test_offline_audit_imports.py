"""An offline audit (--from-dir) contacts nothing, so it must not pay for the NAPALM/Nornir stack (~1.3 s of
imports at 10,000 devices' scale it was a tenth of the budget)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from netfab.cli.pipeline import load_plan
from netfab.render.build import build

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"


def test_an_offline_audit_imports_neither_napalm_nor_nornir(tmp_path: Path) -> None:
    plan = load_plan([RAIL]).plan
    build(plan, tmp_path / "build")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "netfab.cli.app", "audit", str(RAIL), "--from-dir",
         str(tmp_path / "build" / plan.name / "configs"), "--format", "json", "--output", str(tmp_path / "r.json"),
         "--build", str(tmp_path / "audit-build")],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")}
    assert "netfab.audit.engine" in imported  # the audit really ran through its engine
    assert not {m for m in imported if m.split(".")[0] in ("napalm", "nornir", "paramiko")}
