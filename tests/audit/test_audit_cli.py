"""`netfab audit --from-dir` as CI runs it: a whole process, exit codes, every format, the audit dir."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from audit_helpers import ROOT, intent_for, kernel_state, plan_for


def netfab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def eos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with an EOS lab intent, its build, and the build's configs saved as "running"."""
    work = tmp_path_factory.mktemp("audit-cli")
    (work / "intent.yaml").write_text(yaml.safe_dump(intent_for("arista_eos")))
    res = netfab(work, "build", "intent.yaml")
    assert res.returncode == 0, res.stderr
    shutil.copytree(work / "build" / "lab" / "configs", work / "running")
    return work


def fresh(eos: Path, name: str) -> Path:
    target = eos / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(eos / "running", target)
    return target


def test_saved_intended_configs_are_in_sync(eos: Path) -> None:
    res = netfab(eos, "audit", "intent.yaml", "--from-dir", "running")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("netfab audit lab: in sync - 6 devices from saved configs in running")
    assert (eos / "build" / "lab.audit" / "report.json").is_file()


def test_drift_exits_1_with_grouped_findings_and_remediation_files(eos: Path, check_report_json, check_sarif) -> None:
    saved = fresh(eos, "drifted")
    for name in ("leaf2", "leaf4"):
        path = saved / f"{name}.cfg"
        path.write_text(path.read_text().replace("maximum-threshold 1500 kbytes", "maximum-threshold 400 kbytes"))
    res = netfab(eos, "audit", "intent.yaml", "--from-dir", "drifted", "--format", "json", "--out", "audit-out")
    assert res.returncode == 1, res.stderr
    envelope = check_report_json(res.stdout, "audit")
    assert {(f["rule_id"], f["subject"]) for f in envelope["findings"]} == {
        ("AUDIT-ECN", "leaf2"),
        ("AUDIT-ECN", "leaf4"),
    }
    assert envelope["findings"][0]["location"]["file"] == "drifted/leaf2.cfg"
    report = envelope["details"]
    [group] = report["groups"]
    assert group["message"] == (
        "ECN Kmax on queue 3 (qos profile NETFAB-LOSSLESS) is 400 KB on leaf2 and leaf4; the intent says 1,500 KB"
    )
    fix = (eos / "audit-out" / "devices" / "leaf2" / "remediation.cfg").read_text()
    assert "maximum-threshold 1500 kbytes" in fix and "no random-detect" not in fix
    sarif = netfab(eos, "audit", "intent.yaml", "--from-dir", "drifted", "-f", "sarif", "--out", "audit-out")
    assert sarif.returncode == 1 and len(check_sarif(sarif.stdout)["runs"][0]["results"]) == 2


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "sarif"])
def test_every_format_to_a_file(eos: Path, fmt: str) -> None:
    res = netfab(eos, "audit", "intent.yaml", "--from-dir", "running", "--format", fmt, "--output", f"r.{fmt}")
    assert res.returncode == 0 and res.stdout == ""
    assert (eos / f"r.{fmt}").read_text().strip()


def test_a_missing_saved_config_is_unreadable_input(eos: Path) -> None:
    saved = fresh(eos, "partial")
    (saved / "spine2.cfg").unlink()
    res = netfab(eos, "audit", "intent.yaml", "--from-dir", "partial")
    assert res.returncode == 2
    line = "spine2: error[AUDIT-UNREADABLE] could not be audited: no saved running config partial/spine2.cfg"
    assert line in res.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "yaml"], "'yaml' is not one of 'text', 'json', 'junit', 'sarif', 'markdown'"),
        (["--from-dir", "nowhere"], "--from-dir nowhere: not a directory"),
        (["--from-dir", "running", "--remediate"], "cannot be combined with --lab or --remediate"),
        (["--from-dir", "running", "--limit", "router*"], "--limit 'router*' matches no device"),
        (["--from-dir", "running", "--playbook", "bad.yaml"], "cannot use audit runbook bad.yaml"),
    ],
)
def test_usage_errors_exit_2_with_a_sentence(eos: Path, args: list[str], message: str) -> None:
    (eos / "bad.yaml").write_text("unmanaged: oops-not-a-list\n")
    res = netfab(eos, "audit", "intent.yaml", *args)
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr


def test_frr_offline_with_saved_kernel_state(tmp_path: Path) -> None:
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(intent_for("frr")))
    assert netfab(tmp_path, "build", "intent.yaml").returncode == 0
    saved = tmp_path / "saved"
    saved.mkdir()
    for dev in plan_for("frr").devices.values():
        shutil.copy(tmp_path / "build" / "lab" / "configs" / f"{dev.name}.conf", saved)
        state = kernel_state(dev)
        if dev.name == "leaf3":
            state["sysctl"]["net.ipv6.fib_multipath_hash_policy"] = 0
        (saved / f"{dev.name}.state.json").write_text(json.dumps(state))
    res = netfab(tmp_path, "audit", "intent.yaml", "--from-dir", "saved")
    assert res.returncode == 1
    assert (
        "  1. ECMP hash fields (ipv6) is dst_ip,ip_protocol,ipv6_flow_label,src_ip on leaf3; "
        "the intent says dst_ip,dst_port,ip_protocol,src_ip,src_port"
    ) in res.stdout
    assert (tmp_path / "build" / "lab.audit" / "devices" / "leaf3" / "host.sh").is_file()
