"""intent/hardware/: one example per platform family naming real catalogue models; each lints clean (no
error, no warning) and builds. They live beside intent/*.yaml, not in it, so the vendor-schema matrix
(which forces every example onto every platform) does not force a NOS-specific model onto another NOS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from netfab.core.findings import Severity
from netfab.lint import lint_paths
from netfab.platforms import platform_names

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "intent" / "hardware").glob("*.yaml"))


def test_every_platform_family_has_an_example_naming_its_models() -> None:
    covered: set[str] = set()
    for path in EXAMPLES:
        topo = yaml.safe_load(path.read_text(encoding="utf-8"))["topology"]
        tiers = [t for t in (topo.get("leaf"), topo.get("spine"), topo.get("superspine")) if t]
        assert all(t.get("model") for t in tiers), f"{path.name}: every tier names its model"
        covered.update(t["platform"] for t in tiers)
    assert covered == set(platform_names())


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_lints_clean_and_builds(path: Path, tmp_path: Path) -> None:
    result = lint_paths([path])
    # Lint-clean = no error and no warning; info notes stay (REV020 says when a model's buffer is not public).
    problems = [f for f in result.findings if f.severity is not Severity.INFO]
    assert not problems, [f"{f.rule_id} {f.message}" for f in problems]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", "build", str(path), "-o", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    configs = list((tmp_path).glob("*/configs/*"))
    assert configs, proc.stdout
