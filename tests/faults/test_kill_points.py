"""SIGKILL at every journal state transition of deploy and of rollback, against the real lab.

The kill comes from the journal's test hook (NETFAB_TEST_KILL_AT=<state>:<n>: the process kills itself right
after the n-th record of <state> is on disk), so each trial stops at an exact transition, not a guessed
moment. Each trial then proves, on the devices:
  1. once the dead client's remote commands have finished, every switch is old, or new and confirmed, or has
     its device-side revert timer armed (nothing else may be left: RELIABILITY_TRIAL.md F1-A);
  2. the next deploy refuses, and its message puts each switch in its real position (a switch whose timer
     is gone is never said to revert by itself) with a rollback command that runs as printed;
  3. recovery (alternately `netfab rollback RUN_ID` and `netfab deploy --resume`) exits 0 and leaves every
     switch old, FRR and kernel, with no timer armed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import get_args

import pytest

from netfab.deploy.journal import DeviceState, load_run
from tests.faults.conftest import SWITCHES, FaultLab

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[2]

# Kill points as (state, n). The canary wave is leaf1+leaf2 (2 at a time), then the other four (4 at a time).
# Every state is killed at least once in CI; NETFAB_TEST_FAULTS=all adds the same states at later moments
# (second wave, last device), which held in every run so far but cost a lab deploy each.
FULL = os.environ.get("NETFAB_TEST_FAULTS") == "all"
DEPLOY_POINTS = [
    ("backed_up", 1),  # canary prepare
    ("committing", 1),  # about to commit the first canary
    ("committed", 2),  # both canaries committed, post-checks not started
    ("confirming", 1),  # mid-confirm
    ("confirmed", 2),  # canary wave done
    ("committing", 4),  # second wave mid-commit (4 in parallel)
] + (
    [
        ("backed_up", 3),  # second wave's prepare
        ("committed", 6),  # every device committed, the second wave unconfirmed
        ("confirmed", 6),  # everything confirmed, run not finished
    ]
    if FULL
    else []
)
BREAKING_POINTS = [("rolling_back", 1), ("rolled_back", 2)]  # the canary's post-checks fail: wave rollback
UNREACHABLE_POINTS = [("failed", 1)]  # leaf3 refuses connections: failed before any change
ROLLBACK_POINTS = [("rolling_back", 1), ("rolled_back", 3)] + ([("rolling_back", 6)] if FULL else [])

NOT_KILL_POINTS = {
    "planned": "never recorded: the initial state in run.json",
    "in_sync": "recorded only for a device with nothing to change, which this run never touches (as backed_up)",
    "rollback_failed": "recorded when a restore does not converge, right before the run reports it; "
    "tests/deploy/test_journal_checks.py::test_kernel_that_differs_from_the_backup_fails_the_device",
}


def test_every_state_transition_is_a_kill_point() -> None:
    """The kill points are enumerated from the code: every state the engine and rollback record is here."""
    written: set[str] = set()
    for module in ("engine.py", "rollback.py"):
        text = (ROOT / "netfab" / "deploy" / module).read_text()
        written |= set(re.findall(r'device_state\(\s*\w+,\s*"(\w+)"', text))
    covered = {s for s, _ in DEPLOY_POINTS + BREAKING_POINTS + UNREACHABLE_POINTS + ROLLBACK_POINTS}
    assert written - covered - set(NOT_KILL_POINTS) == set(), "a journal state with no kill trial"
    assert set(get_args(DeviceState)) == covered | set(NOT_KILL_POINTS)


def _killed(lab: FaultLab, res: subprocess.CompletedProcess[str], spec: str) -> str:
    assert res.returncode == -9, f"{spec} was never reached (rc {res.returncode}):\n{res.stderr[-3000:]}"
    return str(lab.last_run()["run_id"])


def _check_after_kill(lab: FaultLab, run_id: str) -> dict[str, str]:
    """Invariant 1 and 2; returns each switch's journal state."""
    lab.settle()
    journal = load_run(lab.work / "runs", "lab", run_id)  # a kill never leaves a journal that fails its check
    states = {sw: journal.record.devices[sw].state for sw in SWITCHES if sw in journal.record.devices}
    positions = lab.positions()
    for sw, pos in positions.items():
        if pos.timer == "pending":
            continue  # armed and live: it reverts by itself (and recovery fires it now)
        assert pos.timer == "none", f"{sw}: {pos}"
        assert pos.whole == "old" or (pos.whole == "new" and states.get(sw) in ("confirming", "confirmed")), (
            f"{sw} is {pos.whole} with no timer armed (journal: {states.get(sw)})"
        )
    refused = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--dry-run")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    text = " ".join(refused.stderr.split())
    for line in refused.stderr.splitlines():
        m = re.match(r"\s+([\w, ]+?)(?: and \d+ more)?: (.*)", line)
        if not m:
            continue
        for sw in m[1].split(", "):
            if sw in positions and positions[sw].timer == "none" and positions[sw].whole == "new":
                assert "reverts" not in m[2], f"{sw} has no timer, yet the message says: {m[2]}"
    assert all(sw in text for sw in journal.record.devices), text
    hint = re.search(r"`(netfab rollback [^`]+)`", refused.stderr.replace("\n", " "))
    assert hint and f"--lab {lab.prefix}" in hint[1] and str(lab.intent) in hint[1], refused.stderr
    return states


def _recover(lab: FaultLab, run_id: str, how: str) -> None:
    res = lab.rollback(run_id) if how == "rollback" else lab.deploy(lab.intent, extra=("--resume",))
    assert res.returncode == 0, f"{how}:\n{res.stdout}\n{res.stderr[-3000:]}"
    lab.assert_all("old")


@pytest.mark.parametrize(("state", "nth"), DEPLOY_POINTS, ids=[f"{s}-{n}" for s, n in DEPLOY_POINTS])
def test_deploy_killed_at(fault_lab: FaultLab, state: str, nth: int) -> None:
    spec = f"{state}:{nth}"
    res = fault_lab.deploy(fault_lab.intent, fault_lab.change, NETFAB_TEST_KILL_AT=spec)
    run_id = _killed(fault_lab, res, spec)
    _check_after_kill(fault_lab, run_id)
    _recover(fault_lab, run_id, "rollback" if DEPLOY_POINTS.index((state, nth)) % 2 else "resume")


@pytest.mark.parametrize(("state", "nth"), BREAKING_POINTS, ids=[f"{s}-{n}" for s, n in BREAKING_POINTS])
def test_deploy_killed_during_its_wave_rollback(fault_lab: FaultLab, state: str, nth: int) -> None:
    """RELIABILITY_TRIAL.md F1-A (trials 7-8): the kill lands while the engine rolls a failed canary back."""
    spec = f"{state}:{nth}"
    res = fault_lab.deploy(fault_lab.intent, fault_lab.breaking, NETFAB_TEST_KILL_AT=spec)
    run_id = _killed(fault_lab, res, spec)
    _check_after_kill(fault_lab, run_id)
    # The canary is old already (rolled back by its fired timer), or its timer is still armed (killed
    # right after journaling rolling_back, before firing it): never on the failing config with nothing armed.
    for sw in ("leaf1", "leaf2"):
        pos = fault_lab.position(sw)
        assert pos.whole == "old" or pos.timer == "pending", f"{sw}: {pos}"
    _recover(fault_lab, run_id, "rollback" if nth % 2 else "resume")


@pytest.mark.parametrize(("state", "nth"), UNREACHABLE_POINTS, ids=[f"{s}-{n}" for s, n in UNREACHABLE_POINTS])
def test_deploy_killed_after_an_unreachable_device_failed(fault_lab: FaultLab, state: str, nth: int) -> None:
    inv = fault_lab.work / "inv-refused"
    inv.mkdir(exist_ok=True)
    (inv / "hosts.yaml").write_text("leaf3:\n  port: 1\n")  # connection refused at once
    spec = f"{state}:{nth}"
    res = fault_lab.deploy(
        fault_lab.intent, fault_lab.change, extra=("--inventory", str(inv)), NETFAB_TEST_KILL_AT=spec
    )
    run_id = _killed(fault_lab, res, spec)
    states = _check_after_kill(fault_lab, run_id)
    assert states["leaf3"] == "failed"
    _recover(fault_lab, run_id, "rollback")


@pytest.mark.parametrize(("state", "nth"), ROLLBACK_POINTS, ids=[f"{s}-{n}" for s, n in ROLLBACK_POINTS])
def test_rollback_killed_at(fault_lab: FaultLab, state: str, nth: int) -> None:
    """An interrupted rollback is itself resumable: the next deploy names it, re-running it finishes it."""
    done = fault_lab.deploy(fault_lab.intent, fault_lab.change)
    assert done.returncode == 0, done.stderr
    run_id = str(fault_lab.last_run()["run_id"])
    spec = f"{state}:{nth}"
    res = fault_lab.rollback(run_id, NETFAB_TEST_KILL_AT=spec)
    assert res.returncode == -9, f"{spec} was never reached (rc {res.returncode}):\n{res.stderr[-3000:]}"
    fault_lab.settle()
    for sw, pos in fault_lab.positions().items():
        assert pos.whole in ("old", "new") and pos.timer in ("none", "pending"), f"{sw}: {pos}"
    refused = fault_lab.netfab("deploy", str(fault_lab.intent), "--lab", fault_lab.prefix, "--dry-run")
    assert refused.returncode == 1 and f"rollback of run {run_id} was interrupted" in refused.stderr, refused.stderr
    _recover(fault_lab, run_id, "rollback")


def _reload_of_rollback_conf_running(lab: FaultLab) -> bool:
    needle = f".netfab/{lab.subnet.rsplit('.', 1)[0]}.".encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"--reload" in cmd and b"rollback.conf" in cmd and needle in cmd:
                return True
    return False


def test_f1a_deploy_killed_when_the_restore_starts(fault_lab: FaultLab) -> None:
    """RELIABILITY_TRIAL.md F1-A, trials 7-8, as reproduced there: SIGKILL the deploy the moment the canary's
    restore (`frr-reload.py --reload ...rollback.conf`) starts. It used to leave a leaf on the failing config
    with its timer already cancelled (BGP 0/2, for good); the restore now runs inside the fired timer."""
    lab = fault_lab
    book = lab.playbook("fast", "120s", "20s")
    proc = subprocess.Popen(
        [sys.executable, "-m", "netfab.cli.app", "deploy", str(lab.intent), str(lab.breaking), "--lab", lab.prefix,
         "--playbook", str(book), "--no-diff"],
        cwd=lab.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=lab.env(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not _reload_of_rollback_conf_running(lab):
            assert proc.poll() is None, "the deploy ended before its canary's restore started"
            assert time.monotonic() < deadline, "the canary's restore never started"
            time.sleep(0.002)
        proc.kill()
    finally:
        proc.wait()
    run_id = str(lab.last_run()["run_id"])
    _check_after_kill(lab, run_id)
    for sw in ("leaf1", "leaf2"):
        assert lab.position(sw).whole == "old" or lab.position(sw).timer == "pending", sw
    _recover(lab, run_id, "rollback")
