"""One output-directory convention: analyze, build and audit each keep their own directory, and no verb
deletes another's (a build replaces build/<fabric>/ whole; the others live beside it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from cli_helpers import ROOT, netfab


def test_analyze_then_build_then_audit_keeps_all_three(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text())
    for tier in ("leaf", "spine"):  # EOS: audited from saved files alone (frr also needs kernel state)
        intent["topology"][tier]["platform"] = "arista_eos"
    intent["underlay"]["addressing"] = "p2p31"
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(intent))
    build = tmp_path / "build"

    res = netfab(tmp_path, "analyze", "intent.yaml", "--trials", "20")
    assert res.returncode == 0, res.stderr
    analysis = build / "lab.analysis" / "analysis.json"
    assert analysis.is_file()

    res = netfab(tmp_path, "build", "intent.yaml")
    assert res.returncode == 0, res.stderr
    config = build / "lab" / "configs" / "leaf1.cfg"
    assert config.is_file() and analysis.is_file()

    shutil.copytree(build / "lab" / "configs", tmp_path / "running")
    res = netfab(tmp_path, "audit", "intent.yaml", "--from-dir", "running")
    assert res.returncode == 0, res.stdout + res.stderr
    audit = build / "lab.audit" / "report.json"
    assert audit.is_file() and analysis.is_file() and config.is_file()

    # A rebuild (every deploy runs one) still deletes nothing of the others'.
    res = netfab(tmp_path, "build", "intent.yaml")
    assert res.returncode == 0, res.stderr
    assert audit.is_file() and analysis.is_file() and config.is_file()
    assert sorted(p.name for p in build.iterdir()) == ["lab", "lab.analysis", "lab.audit"]
