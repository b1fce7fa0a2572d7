"""Secrets on a real switch never leave it through netfab: deploy, verify, audit (every format) and rollback.

leaf1 carries what an operator configured by hand and the intent knows nothing about: a BGP neighbor with a
password and a vty login hash (`password 8 <hash>`, FRR's stored form). Then, in order, on one lab:
audit in every format (the secrets are drift: the report quotes the lines, masked), a deploy that changes
maximum-paths (its replace removes the hand-made lines: the diff and the journal show them masked), verify in
every format, and rollback. The rollback's backup holds the lines masked and the device no longer has the
values, so it refuses for leaf1 and pushes nothing (never '********' as a password); once the operator puts
the lines back, the rollback restores leaf1 with the real values.

Finally everything netfab wrote (runs/, build/, the audit dir, every report) and printed is searched for both
values, and so is the device user's ~/.history_frr (vtysh, driven by frr-reload, appends what it is sent
there unless VTYSH_HISTFILE says otherwise).
"""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import pytest

from netfab.core.redact import MASK
from netfab.lab import exec as lab_exec
from netfab.lab import running_config
from tests.e2e.conftest import RunningLab

pytestmark = pytest.mark.lab

BGP_PASSWORD = f"Zq7bgp{secrets.token_hex(6)}"
USER_HASH = f"Zq7hash{secrets.token_hex(6)}"
PEER = "192.0.2.77"  # TEST-NET-1: a configured peer that never comes up, so BGP to the spines is untouched
HISTORY = Path("/root/.history_frr")


def _vtysh(lab: RunningLab, node: str, *commands: str) -> None:
    argv = ["vtysh", "-H", "/dev/null", "-c", "conf t"]  # the test's own commands stay out of the history too
    for command in commands:
        argv += ["-c", command]
    res = lab_exec(lab.prefix, node, argv)
    assert res.returncode == 0, res.stdout + res.stderr


def _asn(lab: RunningLab, node: str) -> str:
    line = next(x for x in running_config(lab.prefix, node).splitlines() if x.startswith("router bgp "))
    return line.split()[2]


def _put_secrets(lab: RunningLab) -> None:
    _vtysh(lab, "leaf1", "service password-encryption", f"password 8 {USER_HASH}")
    _vtysh(lab, "leaf1", f"router bgp {_asn(lab, 'leaf1')}", f"neighbor {PEER} remote-as 65999",
           f"neighbor {PEER} password {BGP_PASSWORD}")  # fmt: skip


def _history() -> str:
    return HISTORY.read_text(errors="replace") if HISTORY.exists() else ""


def test_no_secret_leaves_the_switch_through_netfab(lab: RunningLab) -> None:
    printed: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        res = lab.netfab(*args)
        printed.append(f"$ netfab {' '.join(args)}\n{res.stdout}\n{res.stderr}")
        return res

    _put_secrets(lab)
    running = running_config(lab.prefix, "leaf1")
    assert f"password {BGP_PASSWORD}" in running and f"password 8 {USER_HASH}" in running

    # 1. audit, every format: the hand-made lines are drift, quoted masked
    reports = lab.work / "reports"
    reports.mkdir()
    for fmt in ("text", "json", "junit", "sarif", "markdown"):
        res = run("audit", str(lab.intent), "--lab", lab.prefix, "--format", fmt, "--output", str(reports / fmt))
        assert res.returncode == 1, res.stdout + res.stderr  # leaf1 drifted
    report = json.loads((reports / "json").read_text())["details"]  # the complete audit record
    leaf1 = json.dumps(report["devices"]["leaf1"])
    assert f"password {MASK}" in leaf1, leaf1[:2000]
    res = run("audit", str(lab.intent), "--lab", lab.prefix)  # text on stdout, as an operator runs it
    assert res.returncode == 1 and MASK in res.stdout

    # 2. deploy a change: the replace drops the hand-made lines; the diff shows them masked
    change = lab.work / "paths32.yaml"
    change.write_text("underlay:\n  max_paths: 32\n")
    res = run("deploy", str(lab.intent), str(change), "--lab", lab.prefix, "--confirm-timeout", "120")
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"no neighbor {PEER} password {MASK}" in res.stdout + res.stderr
    after = running_config(lab.prefix, "leaf1")
    assert "maximum-paths 32" in after and BGP_PASSWORD not in after and USER_HASH not in after
    run_id = sorted((lab.work / "runs" / "lab").iterdir())[-1].name
    backup = (lab.work / "runs" / "lab" / run_id / "devices" / "leaf1" / "before.conf").read_text()
    assert f"neighbor {PEER} password {MASK}" in backup and f"password 8 {MASK}" in backup

    # 3. verify, every format
    for fmt in ("text", "json", "junit", "sarif", "markdown"):
        res = run("verify", str(lab.intent), str(change), "--lab", lab.prefix, "--format", fmt,
                  "--output", str(reports / f"verify.{fmt}"))  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr

    # 4. rollback: leaf1's values are gone from the device, so its masked lines cannot be filled: refused,
    #    and nothing was pushed there (no mask, the change still in place)
    res = run("rollback", run_id, "--intent", str(lab.intent), "--lab", lab.prefix)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "leaf1: MaskedSecret" in res.stdout + res.stderr and "restore that line by hand" in res.stdout + res.stderr
    refused = running_config(lab.prefix, "leaf1")
    assert MASK not in refused and "maximum-paths 32" in refused
    assert "maximum-paths 32" not in running_config(lab.prefix, "leaf2")  # the others were restored

    # ... the operator restores the lines by hand; the re-run restores leaf1 with the real values
    _put_secrets(lab)
    res = run("rollback", run_id, "--intent", str(lab.intent), "--lab", lab.prefix)
    assert res.returncode == 0, res.stdout + res.stderr
    restored = running_config(lab.prefix, "leaf1")
    assert MASK not in restored and "maximum-paths 32" not in restored
    assert f"neighbor {PEER} password {BGP_PASSWORD}" in restored and f"password 8 {USER_HASH}" in restored

    # 5. neither value in anything netfab wrote or printed, nor in the device's vtysh history
    written = [p for p in lab.work.rglob("*") if p.is_file()]
    assert any(p.parent.name == "leaf1" and p.name == "diff.txt" for p in written)  # the search covers runs/
    assert any("audit" in p.parts[-2] or "audit" in str(p.relative_to(lab.work)) for p in written)
    for secret in (BGP_PASSWORD, USER_HASH):
        leaked = [str(p) for p in written if secret.encode() in p.read_bytes()]
        assert leaked == [], f"{secret[:6]}... written to {leaked}"
        assert all(secret not in text for text in printed), f"{secret[:6]}... printed"
        assert secret not in _history(), f"{secret[:6]}... in {HISTORY}"
