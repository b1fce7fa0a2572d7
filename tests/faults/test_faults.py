"""Faults other than a kill, against the real lab: concurrent writers, a corrupt or full journal, unreachable,
rejecting and misconfigured devices, a changed host key, a closed output pipe.

Each case is a reproduction from RELIABILITY_TRIAL.md (named per test) and ends with every switch compared,
on the device, to its old config or the intended one (FRR and kernel).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from netfab.lab import exec as run_in
from tests.faults.conftest import SWITCHES, FaultLab

pytestmark = pytest.mark.lab


def _start(lab: FaultLab, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "netfab.cli.app", *args],
        cwd=lab.work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=lab.env(),
    )


def _wait_for_holder(lab: FaultLab, proc: subprocess.Popen[str], verb: str) -> None:
    lock = lab.work / "runs" / "lab" / ".lock"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = json.loads(lock.read_text())
            if data["pid"] == proc.pid and data["verb"] == verb:
                return
        except (OSError, ValueError, KeyError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    pytest.fail(f"{verb} never took the fabric lock")


def _inventory(lab: FaultLab, name: str, hosts: dict[str, object]) -> Path:
    inv = lab.work / f"inv-{name}"
    inv.mkdir(exist_ok=True)
    (inv / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return inv


def _optional_args(**args: object) -> dict[str, object]:
    return {"connection_options": {"netfab_napalm": {"extras": {"optional_args": args}}}}


def _undo_last(lab: FaultLab) -> None:
    rb = lab.rollback(str(lab.last_run()["run_id"]))
    assert rb.returncode == 0, rb.stderr
    lab.assert_all("old")


# --- F4: one writer per fabric ----------------------------------------------------------------------------------
def test_a_second_deploy_and_a_remediation_refuse_while_a_deploy_runs(fault_lab: FaultLab) -> None:
    """Fault 4: two deploys 2.5 s apart both confirmed, the second silently replacing the first."""
    lab = fault_lab
    book = lab.playbook("fast", "120s", "20s")
    first = _start(lab, "deploy", str(lab.intent), str(lab.change), "--lab", lab.prefix, "--playbook", str(book))
    try:
        _wait_for_holder(lab, first, "deploy")
        os.kill(first.pid, signal.SIGSTOP)  # holds the lock for as long as the others need to try it
        try:
            second = lab.deploy(lab.intent)
            remediate = lab.netfab("audit", str(lab.intent), "--lab", lab.prefix, "--remediate")
        finally:
            os.kill(first.pid, signal.SIGCONT)
    finally:
        _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    for res in (second, remediate):
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"fabric is locked by `netfab deploy` (pid {first.pid} on" in " ".join(res.stderr.split())
    lab.assert_all("new")  # the first run's change, not overwritten
    _undo_last(lab)


def test_a_deploy_refuses_while_a_remediation_runs(fault_lab: FaultLab) -> None:
    """Fault 4: a deploy 1.5 s after `audit --remediate` rolled the remediation's live commits back."""
    lab = fault_lab
    asn = next(line.split()[2] for line in lab.old_frr["leaf1"].splitlines() if line.startswith("router bgp"))
    drift = ["-c", "configure terminal", "-c", f"router bgp {asn}", "-c", "address-family ipv4 unicast"]
    run_in(lab.prefix, "leaf1", ["vtysh", *drift, "-c", "maximum-paths 3"])  # a hand edit to remediate
    book = lab.playbook("fast", "120s", "20s")
    rem = _start(lab, "audit", str(lab.intent), "--lab", lab.prefix, "--remediate", "--deploy-playbook", str(book))
    try:
        _wait_for_holder(lab, rem, "audit --remediate")
        os.kill(rem.pid, signal.SIGSTOP)
        try:
            refused = lab.deploy(lab.intent, lab.change)
        finally:
            os.kill(rem.pid, signal.SIGCONT)
    finally:
        _, err = rem.communicate(timeout=600)
    assert refused.returncode == 1, refused.stderr
    assert f"fabric is locked by `netfab audit --remediate` (pid {rem.pid} on" in " ".join(refused.stderr.split())
    assert rem.returncode == 0, err
    lab.assert_all("old")  # the remediation put leaf1 back; the refused deploy changed nothing


# --- F5-B: a checked journal --------------------------------------------------------------------------------------
def test_rollback_refuses_a_corrupt_journal_and_never_pushes_a_truncated_backup(fault_lab: FaultLab) -> None:
    lab = fault_lab
    assert lab.deploy(lab.intent, lab.change).returncode == 0
    run = lab.runs()[-1]
    states = run / "states.jsonl"
    good_states = states.read_bytes()
    with states.open("a") as fh:
        fh.write(json.dumps({"device": "leaf1", "state": "bogus-state"}) + "\n")
    res = lab.rollback(run.name)
    assert res.returncode == 2 and "states.jsonl" in res.stderr and "line" in res.stderr, res.stderr
    lab.assert_all("new")  # refused before touching anything
    states.write_bytes(good_states)

    before = run / "devices" / "leaf1" / "before.conf"
    good = before.read_bytes()
    before.write_bytes(good[:700])  # cut inside `router bgp`: vtysh -C would accept it
    res = lab.rollback(run.name)
    assert res.returncode == 1, res.stderr
    text = " ".join(res.stderr.split())
    assert re.search(r"leaf1: \S*before\.conf \(device leaf1\): truncated", text), text
    positions = lab.positions()
    assert positions["leaf1"].whole == "new"  # never pushed
    assert {sw: p.whole for sw, p in positions.items() if sw != "leaf1"} == {sw: "old" for sw in SWITCHES[1:]}
    before.write_bytes(good)
    again = lab.rollback(run.name)  # the rest already verify at their backup; leaf1 now restores
    assert again.returncode == 0, again.stderr
    lab.assert_all("old")


def test_one_corrupt_run_json_is_named_and_blocks_nothing(fault_lab: FaultLab) -> None:
    """F5-A: `truncate -s 100 runs/lab/<any>/run.json` made every deploy exit 3 without naming the file."""
    lab = fault_lab
    victim = lab.runs()[0] / "run.json"
    good = victim.read_bytes()
    victim.write_bytes(good[:100])
    try:
        res = lab.deploy(lab.intent, extra=("--dry-run",))
    finally:
        victim.write_bytes(good)
    assert res.returncode == 0, res.stderr
    text = "".join(res.stderr.split())  # rich may wrap the long path
    assert "ignoringanunreadablerunjournal" in text and victim.parent.name in text, res.stderr
    lab.assert_all("old")


# --- disk full ----------------------------------------------------------------------------------------------------
@contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_a_full_journal_disk_stops_the_rollout_and_says_where_each_device_is(fault_lab: FaultLab) -> None:
    lab = fault_lab
    # A whole run's journal takes ~430 KB of tmpfs pages here: 200k runs out mid-run.
    with _tmpfs(lab.work / "fullruns", "200k") as runs:
        res = lab.deploy(lab.intent, lab.change, extra=("--runs", str(runs)))
        assert res.returncode == 2, res.stdout + res.stderr
        assert "No space left on device" in res.stderr and "rollout stopped" in res.stderr, res.stderr
        lab.settle()
        for sw, pos in lab.positions().items():
            assert pos.whole == "old" or pos.timer == "pending" or pos.whole == "new", f"{sw}: {pos}"
        # Room again: the run is readable and rolls back completely (FRR and kernel: F1-B after ENOSPC).
        subprocess.run(["mount", "-o", "remount,size=8m", str(runs)], check=True)
        run_id = sorted(p.name for p in (runs / "lab").iterdir() if p.is_dir())[-1]
        rb = lab.netfab("rollback", run_id, "--intent", str(lab.intent), "--lab", lab.prefix, "--runs", str(runs))
        assert rb.returncode == 0, rb.stderr
    lab.assert_all("old")


# --- unreachable and rejecting devices ----------------------------------------------------------------------------
def test_rollback_with_an_unreachable_device_accounts_per_device_and_reruns(fault_lab: FaultLab) -> None:
    lab = fault_lab
    assert lab.deploy(lab.intent, lab.change).returncode == 0
    run_id = str(lab.last_run()["run_id"])
    inv = _inventory(lab, "refused", {"leaf3": {"port": 1}})
    res = lab.netfab("rollback", run_id, "--intent", str(lab.intent), "--lab", lab.prefix, "--inventory", str(inv))
    assert res.returncode == 1, res.stderr
    text = " ".join(res.stderr.split())
    assert "5 devices restored and verified, 1 failed" in text, text
    assert re.search(r"^  leaf3: (?!ok)", res.stderr, re.M), res.stderr
    positions = lab.positions()
    assert positions["leaf3"].whole == "new"
    assert all(p.whole == "old" for sw, p in positions.items() if sw != "leaf3")
    again = lab.rollback(run_id)
    assert again.returncode == 0, again.stderr
    lab.assert_all("old")


def test_a_device_whose_frr_rejects_the_candidate_ends_old(fault_lab: FaultLab) -> None:
    """Fault 3: a wrapper makes leaf3's frr-reload fail `--reload` of the candidate (after applying it)."""
    lab = fault_lab
    wrapper = lab.work / "frr-reload-rejects"
    wrapper.write_text(
        '#!/bin/sh\ncase "$*" in *--reload*candidate.conf*) /usr/lib/frr/frr-reload.py "$@" >/dev/null 2>&1; '
        "echo '% Unknown command: bogus'; exit 1;; esac\nexec /usr/lib/frr/frr-reload.py \"$@\"\n"
    )
    wrapper.chmod(0o755)
    inv = _inventory(lab, "rejects", {"leaf3": _optional_args(frr_reload=str(wrapper))})
    res = lab.deploy(lab.intent, lab.change, extra=("--inventory", str(inv)))
    assert res.returncode == 1, res.stderr
    assert "Restored the previous config" in res.stderr, res.stderr
    positions = lab.positions()
    assert {sw: p.whole for sw, p in positions.items()} == {
        "leaf1": "new", "leaf2": "new", "leaf3": "old", "leaf4": "old", "spine1": "old", "spine2": "old"
    }  # fmt: skip
    _undo_last(lab)


def test_a_host_script_failing_on_one_device_is_reported_as_that(fault_lab: FaultLab) -> None:
    """F3-C: the restore's failing host script was reported as 'RESTORE FAILED ... remaining difference' with
    frr-reload's log printed as the difference, for a device whose FRR was fully restored."""
    lab = fault_lab
    inv = _inventory(lab, "badenv", {"leaf3": _optional_args(host_script_env={"ECN_MODE": "bogus"})})
    res = lab.deploy(lab.intent, lab.change, extra=("--inventory", str(inv)))
    assert res.returncode == 1, res.stderr
    text = " ".join(res.stderr.split())
    assert "leaf3" in text and "the host script failed" in text, text
    assert "remaining difference" not in text and "FRR still differs" not in text, text
    assert lab.position("leaf3").frr == "old"
    _undo_last(lab)


# --- F6: a changed host key ----------------------------------------------------------------------------------------
def test_a_changed_host_key_is_refused_and_nothing_changes(fault_lab: FaultLab) -> None:
    lab = fault_lab
    known = Path(f"/var/tmp/netfab-lab/{lab.prefix}/ssh/known_hosts")
    good = known.read_text()
    other = lab.work / "otherkey"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    fake = (other.with_suffix(".pub")).read_text().split()[:2]
    ip = lab.ips["leaf2"]
    known.write_text(
        "".join(f"{ip} {' '.join(fake)}\n" if line.split()[0] == ip else line + "\n" for line in good.splitlines())
    )
    try:
        res = lab.deploy(lab.intent, lab.change)
    finally:
        known.write_text(good)
    assert res.returncode == 1, res.stderr
    assert "MISMATCH" in res.stderr and "leaf2" in res.stderr, res.stderr
    lab.assert_all("old")  # the canary wave failed before any commit


# --- F8-E: a closed output pipe leaves no phantom run -------------------------------------------------------------
def test_a_closed_pipe_leaves_no_run_marked_running(fault_lab: FaultLab) -> None:
    lab = fault_lab
    cmd = [sys.executable, "-m", "netfab.cli.app", "deploy", str(lab.intent), str(lab.change), "--lab", lab.prefix]
    shell = " ".join(map(str, cmd)) + " --dry-run 2>&1 | head -1"
    subprocess.run(["sh", "-c", shell], cwd=lab.work, env=lab.env(), check=True, capture_output=True, timeout=300)
    assert lab.last_run()["state"] != "running"
    after = lab.deploy(lab.intent, extra=("--dry-run",))
    assert after.returncode == 0, after.stderr  # not refused as "interrupted"
    lab.assert_all("old")


@pytest.fixture(autouse=True)
def _no_leftover_workdirs(fault_lab: FaultLab) -> Iterator[None]:
    yield
    shutil.rmtree(fault_lab.work / "fullruns", ignore_errors=True)
