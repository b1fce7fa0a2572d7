"""The checked journal, the fabric lock, the refusal message and `netfab rollback` over the fake driver (no network).

Regression tests for RELIABILITY_TRIAL.md: F5-B (a truncated before.conf pushed; a bogus states.jsonl line
silently dropping a device), F5-A (one corrupt run.json blocking every deploy), F1-B (rollback restoring the
switch config but not the host script), F4 (no lock), F8-E (phantom runs), the refusal hint without
--intent/--lab, and the kill hook being inert unless set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netfab.deploy import connection
from netfab.deploy.journal import JournalCorrupt, load_run, scan_runs
from netfab.deploy.lock import FabricLocked, acquire, lock_path
from netfab.deploy.recovery import refusal
from netfab.deploy.rollback import rollback_run
from netfab.deploy.waves import Wave
from tests.deploy.test_engine_flow import BASE, DEVICES, NEW, FakeDriver, Rig, _dead_pid, rig  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
WAVES = [Wave("leaves", ("leaf1", "leaf2", "leaf3"), 4, 0), Wave("spines", ("spine1",), 1, 0)]


class HostFake(FakeDriver):
    """FakeDriver plus the frr driver's host-script side: the script last applied and the kernel it set."""

    def _x(self) -> dict[str, Any]:
        x = self.dev.__dict__
        x.setdefault("host", "ecn 150\n")
        x.setdefault("kernel", "150")
        return x

    def get_applied_companions(self) -> dict[str, str]:
        return {"host.sh": self._x()["host"]}

    def load_companions(self, companions: dict[str, str]) -> None:
        self._x()["host_candidate"] = next(iter(companions.values()))

    def get_kernel_state(self) -> dict[str, Any]:
        return {"ecn": self._x()["kernel"], "env": {"ECN_MODE": "driver setting, not device state"}}

    def compare_config(self) -> str:
        diff = super().compare_config()
        x = self._x()
        if x.get("host_candidate") not in (None, x["host"]):
            diff += f"# host script\n-{x['host']}+{x['host_candidate']}"
        return diff

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        x = self._x()
        script = x.pop("host_candidate", None)
        if self.dev.candidate is None:
            self.dev.candidate = self.dev.running
        super().commit_config(message, revert_in)
        if script is not None:
            if x.get("host_fails"):
                raise RuntimeError("the host script failed: nft: syntax error")
            x["host_before"], x["host"] = x["host"], script
            if not x.get("kernel_stuck"):
                x["kernel"] = script.split()[1]

    def rollback(self) -> None:
        super().rollback()
        x = self._x()
        x["host"] = x.get("host_before", x["host"])
        x["kernel"] = x["host"].split()[1]

    def discard_config(self) -> None:
        super().discard_config()
        self._x().pop("host_candidate", None)


@pytest.fixture
def hrig(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> Rig:  # noqa: F811
    monkeypatch.setattr(connection, "resolve_driver", lambda p: HostFake)
    return rig


def _deploy_with_host(r: Rig, ecn: str = "200") -> Any:
    deployer = r.deployer(WAVES)
    for name in r.names:
        deployer.artifacts[name].companions = {f"{name}.sh": f"ecn {ecn}\n"}
    out = deployer.run(WAVES)
    deployer.journal.finish("completed" if out.ok else "failed", out.message)
    return out


def _nr(r: Rig) -> Any:
    from netfab.deploy.inventory import build_nornir

    hosts = {n: {"hostname": n, "groups": ["platform_fake"]} for n in r.names}
    groups = {"platform_fake": {"connection_options": {"netfab_napalm": {"platform": "fake"}}}}
    return build_nornir(hosts, groups, r.credentials, workers=4)


# --- rollback restores everything, verified (F1-B) ------------------------------------------------------------
def test_rollback_restores_config_and_host_script_from_the_journal(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    assert all(DEVICES[n].__dict__["host"] == "ecn 200\n" for n in hrig.names)
    journal = load_run(hrig.root, "fab", "run1")
    assert journal.read_device_file("leaf1", "before.host.sh") == "ecn 150\n"
    out = rollback_run(_nr(hrig), journal)
    assert out.failures == {}, out.failures
    for n in hrig.names:
        assert DEVICES[n].running == BASE.format(name=n)
        assert DEVICES[n].__dict__["host"] == "ecn 150\n"  # ECN back too, not only the switch config
    assert load_run(hrig.root, "fab", "run1").record.state == "rolled_back"


def test_a_failing_host_script_is_reported_for_that_device_only(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    DEVICES["leaf2"].__dict__["host_fails"] = True
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert list(out.failures) == ["leaf2"] and "host script failed" in out.failures["leaf2"]
    assert sorted(out.restored) == ["leaf1", "leaf3", "spine1"]
    assert load_run(hrig.root, "fab", "run1").record.devices["leaf2"].state != "rolled_back"


def test_kernel_that_differs_from_the_backup_fails_the_device(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    kernel = hrig.root / "fab" / "run1" / "devices" / "leaf3" / "before.kernel.json"
    assert json.loads(kernel.read_text()) == {"ecn": "150"}  # the driver's env is not device state
    DEVICES["leaf3"].__dict__["kernel_stuck"] = True  # re-running the old script leaves the kernel as it is
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert list(out.failures) == ["leaf3"]
    assert 'kernel state differs from the backup: ecn: "200" now, "150" in the backup' in out.failures["leaf3"]
    assert load_run(hrig.root, "fab", "run1").record.devices["leaf3"].state == "rollback_failed"


def test_kernel_drift_alone_re_runs_the_backup_script(hrig: Rig) -> None:
    """The script copies agree, the kernel does not: the rollback re-applies the backup's script."""
    assert _deploy_with_host(hrig).ok
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert out.failures == {}
    DEVICES["leaf1"].__dict__["kernel"] = "999"  # someone changed ECN by hand after the rollback
    journal = load_run(hrig.root, "fab", "run1")
    out = rollback_run(_nr(hrig), journal)
    assert out.failures == {} and DEVICES["leaf1"].__dict__["kernel"] == "150"


# --- the journal is checked before anything is pushed (F5-B) --------------------------------------------------
def test_a_truncated_backup_is_never_pushed(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    before = hrig.root / "fab" / "run1" / "devices" / "leaf1" / "before.conf"
    before.write_bytes(before.read_bytes()[:10])
    pushed = DEVICES["leaf1"].running
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert "leaf1" in out.failures and "truncated" in out.failures["leaf1"] and "before.conf" in out.failures["leaf1"]
    assert DEVICES["leaf1"].running == pushed  # nothing was pushed to leaf1
    assert sorted(out.restored) == ["leaf2", "leaf3", "spine1"]


def test_an_edited_backup_of_the_same_size_is_refused(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    before = hrig.root / "fab" / "run1" / "devices" / "leaf2" / "before.conf"
    before.write_text(before.read_text().replace("9214", "9999"))
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert "does not match the checksum" in out.failures["leaf2"]


def test_a_bogus_state_line_is_refused_naming_file_line_and_device(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    states = hrig.root / "fab" / "run1" / "states.jsonl"
    with states.open("a") as fh:
        fh.write(json.dumps({"device": "leaf1", "state": "bogus-state"}) + "\n")
    with pytest.raises(JournalCorrupt, match=r"states\.jsonl.*line \d+ is not a state record"):
        load_run(hrig.root, "fab", "run1")
    # the same line with a valid checksum but an unknown state names the device
    from netfab.deploy.journal import _line_crc

    lines = states.read_text().splitlines()[:-1]
    lines.append(
        json.dumps(
            {"device": "leaf1", "state": "bogus", "error": "", "at": "", "crc": _line_crc("leaf1", "bogus", "", "")}
        )
    )
    states.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalCorrupt, match=r"device leaf1.*unknown state 'bogus'|unknown state 'bogus'.*"):
        load_run(hrig.root, "fab", "run1")


def test_a_torn_last_line_is_skipped_but_a_torn_middle_is_not(hrig: Rig) -> None:
    assert _deploy_with_host(hrig).ok
    states = hrig.root / "fab" / "run1" / "states.jsonl"
    good = states.read_text()
    states.write_text(good + '{"device": "leaf1", "sta')  # the crash cut the last write short
    assert load_run(hrig.root, "fab", "run1").record.devices["leaf1"].state == "confirmed"
    states.write_text('{"device": "leaf1", "sta\n' + good)
    with pytest.raises(JournalCorrupt, match="line 1"):
        load_run(hrig.root, "fab", "run1")
    states.write_bytes(good.encode() + b"\xff\xfe\n")
    with pytest.raises(JournalCorrupt, match="not UTF-8"):
        load_run(hrig.root, "fab", "run1")


def test_one_corrupt_run_json_is_named_and_blocks_nothing_else(rig: Rig) -> None:  # noqa: F811
    old = rig.deployer(WAVES, run_id="run0")
    old.journal.finish("completed")
    killed = rig.deployer(WAVES, run_id="run1")
    killed.journal.record.pid = _dead_pid()
    killed.journal.save()
    killed.journal.device_state("leaf1", "committed")
    run_json = rig.root / "fab" / "run0" / "run.json"
    run_json.write_bytes(run_json.read_bytes()[:100])
    scan = scan_runs(rig.root, "fab")
    assert [j.record.run_id for j in scan.interrupted] == ["run1"]
    assert len(scan.unreadable) == 1 and str(run_json) in str(scan.unreadable[0])
    # an edit that keeps it valid JSON is caught by the checksum
    data = json.loads((rig.root / "fab" / "run1" / "run.json").read_text())
    data["state"] = "completed"
    (rig.root / "fab" / "run1" / "run.json").write_text(json.dumps(data))
    with pytest.raises(JournalCorrupt, match="checksum"):
        load_run(rig.root, "fab", "run1")


def test_dry_runs_never_count_as_interrupted(rig: Rig) -> None:  # noqa: F811
    dry = rig.deployer(WAVES, dry_run=True, run_id="dry")
    dry.journal.record.pid = _dead_pid()
    dry.journal.save()
    assert scan_runs(rig.root, "fab").interrupted == []


# --- the refusal message says where each device is (F1-A's false "timers revert it", N1) ---------------------
def test_refusal_names_each_devices_state_and_a_runnable_rollback_command(rig: Rig) -> None:  # noqa: F811
    killed = rig.deployer(WAVES, run_id="run1")
    rec = killed.journal.record
    rec.pid, rec.lab, rec.confirm_timeout_s, rec.intent = _dead_pid(), "rel", 30, ["intent/lab.yaml", "t/x.yaml"]
    killed.journal.save()
    killed.journal.device_state("leaf1", "committed")
    killed.journal.device_state("leaf2", "rolling_back")
    killed.journal.device_state("leaf3", "confirmed")
    text = refusal(scan_runs(rig.root, "fab").interrupted[0])
    lines = {line.split(":", 1)[0].strip(): line for line in text.splitlines()}
    assert "30 s device timer reverts it by about" in lines["leaf1"]
    assert "the revert runs on the device and finishes there by itself" in lines["leaf2"]
    assert "keeps the new config" in lines["leaf3"]
    assert "untouched" in lines["spine1"]
    assert "netfab rollback run1 intent/lab.yaml t/x.yaml --lab rel" in text


def test_refusal_for_client_confirm_says_the_change_stays(rig: Rig) -> None:  # noqa: F811
    killed = rig.deployer(WAVES, run_id="run1")
    killed.journal.record.pid, killed.journal.record.confirm_mode = _dead_pid(), "client"
    killed.journal.save()
    killed.journal.device_state("leaf1", "committed")
    assert "WITHOUT a device timer" in refusal(scan_runs(rig.root, "fab").interrupted[0])


# --- the kill hook is inert unless set -------------------------------------------------------------------------
KILL_CHILD = """
import sys
from pathlib import Path
from netfab.deploy.journal import DeviceRecord, Journal, RunRecord
waves = [{"name": "w", "devices": ["a"]}]
rec = RunRecord("r", "fab", [], "p", False, waves=waves, devices={"a": DeviceRecord("a", "w")})
j = Journal(Path(sys.argv[1]), rec)
for state in ("backed_up", "committed", "committed", "confirmed"):
    j.device_state("a", state)
print("survived", flush=True)
"""


@pytest.mark.parametrize(("spec", "rc"), [(None, 0), ("committed:2", -signal.SIGKILL), ("committed:3", 0)])
def test_kill_hook(tmp_path: Path, spec: str | None, rc: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NETFAB_TEST_KILL_AT"} | {"PYTHONPATH": str(ROOT)}
    if spec:
        env["NETFAB_TEST_KILL_AT"] = spec
    res = subprocess.run([sys.executable, "-c", KILL_CHILD, str(tmp_path)], env=env, capture_output=True, text=True)
    assert res.returncode == rc, res.stderr
    last = json.loads((tmp_path / "fab" / "r" / "states.jsonl").read_text().splitlines()[-1])
    assert last["state"] == ("committed" if rc else "confirmed")  # killed right after the 2nd write, on disk


# --- one writer per fabric (F4) ---------------------------------------------------------------------------------
HOLDER = """
import sys, time
from pathlib import Path
from netfab.deploy.lock import acquire
lock = acquire(Path(sys.argv[1]), "lab", sys.argv[2])
lock.set_run("run-A")
print("locked", flush=True)
time.sleep(60)
"""


def _hold(runs: Path, verb: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(runs), verb],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "locked"
    return child


def test_lock_refuses_a_second_writer_and_names_the_holder(tmp_path: Path) -> None:
    child = _hold(tmp_path, "deploy")
    try:
        with pytest.raises(FabricLocked) as err:
            acquire(tmp_path, "lab", "rollback")
        assert err.value.holder is not None and err.value.holder.pid == child.pid
        assert f"`netfab deploy` (pid {child.pid} on " in str(err.value) and "run run-A" in str(err.value)
    finally:
        child.kill()
        child.wait()
    # The holder died without releasing: the next writer gets it and is told about the stale lock.
    lock = acquire(tmp_path, "lab", "rollback")
    assert lock.stale is not None and lock.stale.pid == child.pid
    lock.release()
    again = acquire(tmp_path, "lab", "deploy")  # released cleanly: nothing stale
    assert again.stale is None
    again.release()
    assert lock_path(tmp_path, "lab").read_text() == ""


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"},
        timeout=120,
    )


@pytest.mark.parametrize(
    ("holder", "verb"), [("rollback", "deploy"), ("deploy", "rollback"), ("audit --remediate", "deploy")]
)
def test_cli_refuses_while_another_run_holds_the_fabric(tmp_path: Path, holder: str, verb: str) -> None:
    """Both orders, before any device is contacted (the production inventory is never reached here)."""
    runs = tmp_path / "runs"
    child = _hold(runs, holder)
    try:
        intent = str(ROOT / "intent" / "lab.yaml")
        args = ["deploy", intent, "--dry-run"] if verb == "deploy" else ["rollback", "run-A", "--intent", intent]
        res = _cli(tmp_path, *args, "--runs", str(runs))
    finally:
        child.kill()
        child.wait()
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"fabric is locked by `netfab {holder}` (pid {child.pid} on" in " ".join(res.stderr.split())
    assert not (runs / "lab").exists() or [p.name for p in (runs / "lab").iterdir()] == [".lock"]


def test_a_runs_dir_that_cannot_hold_the_lock_is_a_usage_error(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "lab").write_text("x")  # the fabric's journal dir is a file: no lock can be created there
    res = _cli(tmp_path, "deploy", str(ROOT / "intent" / "lab.yaml"), "--dry-run", "--runs", str(runs))
    assert res.returncode == 2, res.stderr
    assert "cannot create the fabric lock" in res.stderr and "lab/.lock" in " ".join(res.stderr.split())


def test_an_inventory_error_leaves_no_running_run(tmp_path: Path) -> None:
    """F8-E: an --inventory naming an unknown host fails before the journal exists."""
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yaml").write_text("nosuchswitch:\n  hostname: 192.0.2.1\n")
    runs = tmp_path / "runs"
    intent = str(ROOT / "intent" / "lab.yaml")
    res = _cli(tmp_path, "deploy", intent, "--dry-run", "--inventory", str(inv), "--runs", str(runs))
    assert res.returncode == 2, res.stdout + res.stderr
    assert scan_runs(runs, "lab").interrupted == []
    assert [p.name for p in (runs / "lab").iterdir() if p.is_dir()] == []


def test_an_unusable_backup_of_a_device_never_committed_is_not_a_failure(hrig: Rig) -> None:
    """A full disk cut the second wave's backup short before it was committed: nothing to undo there."""
    deployer = hrig.deployer(WAVES, dry_run=True)
    deployer.run(WAVES)
    deployer.journal.finish("dry_run")
    sums = hrig.root / "fab" / "run1" / "devices.sha256"
    lines = sums.read_text().splitlines(keepends=True)
    sums.write_text("".join(line for line in lines if not line.endswith(" leaf3/before.conf\n")))
    out = rollback_run(_nr(hrig), load_run(hrig.root, "fab", "run1"))
    assert out.failures == {}
    leaf3 = next(d for d in out.devices if d.device == "leaf3")
    assert "never committed by this run" in leaf3.message and "checksum file" in leaf3.message
    assert all("commit_config" not in DEVICES[n].calls for n in hrig.names)
