"""The cluster examples of issue 13 (intent/superpod-su.yaml, meta-3tier.yaml, ent64.yaml): lint-clean, and
`netfab build` writes every network of each, with the host files each network needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from netfab.core.findings import Severity
from netfab.lint import lint_paths

ROOT = Path(__file__).resolve().parents[2]
INTENTS = ROOT / "intent"

# example -> {build dir: (switches, host scripts)}
EXPECTED = {
    "superpod-su.yaml": {"spod-su": (24, 32), "spod-su-storage": (4, 32), "spod-su-oob": (3, 0)},
    "meta-3tier.yaml": {"meta-2zone": (104, 128)},
    "ent64.yaml": {"ent64": (4, 8), "ent64-storage": (4, 8)},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_is_lint_clean(name: str) -> None:
    result = lint_paths([INTENTS / name])
    # Lint-clean: no error, no warning. Cumulus tiers carry one info note, CAP024 (NVUE has no restore timer).
    unexpected = [f for f in result.findings if f.rule_id != "CAP024" or f.severity is not Severity.INFO]
    assert unexpected == [], [(f.rule_id, f.message) for f in unexpected]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_build_writes_every_network(name: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", "build", str(INTENTS / name), "--out", str(tmp_path), "-q"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(EXPECTED[name])
    for fabric, (switches, scripts) in EXPECTED[name].items():
        out = tmp_path / fabric
        assert len(list((out / "configs").iterdir())) >= switches
        hosts = sorted(p.name for p in (out / "hosts").iterdir())
        assert len([h for h in hosts if h.endswith(".sh") and not h.startswith("mlxconfig-")]) == scripts
        # The back end carries the NCCL/RCCL environment and the firmware script of its server profile.
        if fabric == next(iter(EXPECTED[name])):
            assert any(h.startswith("nccl-") for h in hosts) and any(h.startswith("rccl-") for h in hosts)
            assert any(h.startswith("mlxconfig-") for h in hosts)
        assert (out / "cabling.csv").is_file() and (out / "inventory" / "hosts.yaml").is_file()
    # Every network's script runs under sh -n.
    for script in tmp_path.rglob("hosts/*.sh"):
        subprocess.run(["sh", "-n", str(script)], check=True)


def test_network_selector_on_the_verbs(tmp_path: Path) -> None:
    """--network picks one network for analyze (and deploy/verify/audit, which share the loader); an unknown
    name is a usage error (2) that lists the intent's networks."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    intent = str(INTENTS / "ent64.yaml")
    ok = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", "analyze", intent, "--network", "storage", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert '"fabric": "ent64-storage"' in (tmp_path / "analysis.json").read_text()
    for verb in ("analyze", "verify", "audit", "deploy"):
        bad = subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", verb, intent, "--network", "nope"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
        )  # fmt: skip
        assert bad.returncode == 2, (verb, bad.stderr)
        assert "unknown network 'nope'; this intent has backend, storage" in bad.stderr, (verb, bad.stderr)
