"""Deployer orchestration over a fake NAPALM driver (fast, no network).

FakeDriver is a NetworkDriver whose "device" is an in-memory FakeDevice (running config, candidate, a
pending commit-confirm with its rollback point). It records every NAPALM call, so the tests assert the
engine's decisions: waves and failure budgets, dry run, rollback with proof, resume after a killed run,
and the no-timer (NX-OS-like) path. test_redaction.py reuses it.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from napalm.base import NetworkDriver
from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException

from netfab.core.events import DeployEvent, EventKind, Fanout, JsonEvents, Listener
from netfab.deploy import connection, engine
from netfab.deploy.credentials import Credentials
from netfab.deploy.engine import Deployer, DeployOutcome, DeviceArtifacts
from netfab.deploy.inventory import build_nornir
from netfab.deploy.journal import DeviceRecord, Journal, JournalError, RunRecord, interrupted_runs, load_run
from netfab.deploy.waves import Wave
from netfab.verify.checks import CheckResult
from netfab.verify.results import check_result

BASE = "hostname {name}\ninterface Ethernet1\n   mtu 9214\n"
NEW = "hostname {name}\ninterface Ethernet1\n   mtu 9216\n"


@dataclass
class FakeDevice:
    name: str
    running: str
    candidate: str | None = None
    pending: bool = False
    rollback_point: str | None = None
    revert_in: int | None = None
    calls: list[str] = field(default_factory=list)
    opened_with: dict[str, Any] = field(default_factory=dict)
    fail_open: bool = False
    fail_commit: str | None = None
    checks_pass: bool = True
    timer: bool = True
    """False: commit_config(revert_in=...) raises NotImplementedError before doing anything (NAPALM nxos)."""
    rollback_residue: bool = False
    """True: rollback() "forgets" a line, so the engine's proof (backup diffs empty) must fail."""


DEVICES: dict[str, FakeDevice] = {}
_LOCK = threading.Lock()


class FakeDriver(NetworkDriver):
    """NAPALM's contract over a FakeDevice; the hostname picks the device."""

    def __init__(
        self, hostname: str, username: str, password: str, timeout: int = 60, optional_args: dict | None = None
    ) -> None:
        self.dev = DEVICES[hostname]
        self.password = password  # a device may echo it back in an error (test_redaction uses this)
        self.dev.opened_with = dict(optional_args or {})

    def _call(self, name: str) -> None:
        with _LOCK:
            self.dev.calls.append(name)

    def open(self) -> None:
        self._call("open")
        if self.dev.fail_open:
            raise ConnectionException(f"cannot connect to {self.dev.name}")

    def close(self) -> None:
        self._call("close")
        self.dev.candidate = None

    def has_pending_commit(self) -> bool:
        self._call("has_pending_commit")
        return self.dev.pending

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False, format: str = "text"):
        self._call("get_config")
        return {"running": self.dev.running, "startup": "", "candidate": self.dev.candidate or ""}

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._call("load_replace_candidate")
        assert config is not None
        if "bogus" in config:
            raise ReplaceConfigException("% Invalid input (at token 0: 'bogus')")
        self.dev.candidate = config

    def compare_config(self) -> str:
        self._call("compare_config")
        if self.dev.candidate is None:
            return ""
        old, new = self.dev.running.splitlines(True), self.dev.candidate.splitlines(True)
        return "".join(difflib.unified_diff(old, new, "running", "candidate"))

    def discard_config(self) -> None:
        self._call("discard_config")
        self.dev.candidate = None

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        self._call("commit_config")
        if revert_in is not None and not self.dev.timer:
            raise NotImplementedError("Commit confirm has not been implemented on this platform.")
        if self.dev.fail_commit:
            raise CommitError(self.dev.fail_commit.format(password=self.password))
        assert self.dev.candidate is not None
        self.dev.rollback_point, self.dev.running = self.dev.running, self.dev.candidate
        self.dev.candidate, self.dev.pending, self.dev.revert_in = None, revert_in is not None, revert_in

    def confirm_commit(self) -> None:
        self._call("confirm_commit")
        if not self.dev.pending:
            raise CommitError("No pending commit-confirm found!")
        self.dev.pending = False

    def rollback(self) -> None:
        self._call("rollback")
        assert self.dev.rollback_point is not None
        self.dev.running, self.dev.pending = self.dev.rollback_point, False
        if self.dev.rollback_residue:
            self.dev.running += "interface Ethernet9\n"


def fake_check(messages: dict[str, str] | None = None) -> Callable[..., list[CheckResult]]:
    """Stands in for run_checks: one check per device, status from FakeDevice.checks_pass. It also makes a
    NAPALM call on the same connection, as real checks do between commit and confirm."""

    def run_checks(dev: Any, conn: FakeDriver, plan: Any) -> list[CheckResult]:
        conn._call("check")
        if conn.dev.checks_pass:
            return [check_result(dev.name, "FAKE", "pass", "ok")]
        msg = (messages or {}).get(dev.name, "BGP session to spine1 is down")
        return [check_result(dev.name, "FAKE", "fail", msg)]

    return run_checks


@dataclass
class Rig:
    root: Path
    names: list[str]
    credentials: Credentials
    events: list[tuple[str, str, str]] = field(default_factory=list)
    journal: Journal | None = None

    def dev(self, name: str) -> FakeDevice:
        return DEVICES[name]

    def deployer(
        self,
        waves: list[Wave],
        dry_run: bool = False,
        configs: dict[str, str] | None = None,
        run_id: str = "run1",
        on_event: Listener | None = None,
        **kwargs: Any,
    ) -> Deployer:
        hosts = {n: {"hostname": n, "groups": ["platform_fake"]} for n in self.names}
        groups = {"platform_fake": {"connection_options": {"netfab_napalm": {"platform": "fake"}}}}
        nr = build_nornir(hosts, groups, self.credentials, workers=8)
        record = RunRecord(
            run_id=run_id,
            fabric="fab",
            intent=["intent.yaml"],
            playbook="deploy.yaml",
            dry_run=dry_run,
            waves=[{"name": w.name, "devices": list(w.devices)} for w in waves],
            devices={d: DeviceRecord(d, w.name) for w in waves for d in w.devices},
        )
        self.journal = Journal(self.root, record, self.credentials.secrets())
        plan = SimpleNamespace(devices={n: SimpleNamespace(name=n) for n in self.names})
        configs = configs or {n: NEW.format(name=n) for n in self.names}
        artifacts = {n: DeviceArtifacts(config=configs[n]) for n in self.names}
        return Deployer(
            nr,
            plan,  # type: ignore[arg-type]  # the engine only reads plan.devices[name] (run_checks is faked)
            artifacts,
            self.journal,
            confirm_timeout_s=300,
            settle_timeout_s=0,  # one post-check poll: failures are decided at once
            dry_run=dry_run,
            on_event=on_event or (lambda e: self.events.append((e.kind.value, e.subject, e.message))),
            **kwargs,
        )

    def state(self, name: str) -> str:
        assert self.journal is not None
        return load_run(self.root, "fab", self.journal.record.run_id).record.devices[name].state


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    names = ["leaf1", "leaf2", "leaf3", "spine1"]
    DEVICES.clear()
    for n in names:
        DEVICES[n] = FakeDevice(n, BASE.format(name=n))
    real_resolve = connection.resolve_driver
    monkeypatch.setattr(connection, "resolve_driver", lambda p: FakeDriver if p == "fake" else real_resolve(p))
    monkeypatch.setattr(engine, "run_checks", fake_check())
    yield Rig(tmp_path / "runs", names, Credentials(username="netops", password="pw-engine-flow"))
    DEVICES.clear()


def two_waves(budget: int = 0) -> list[Wave]:
    return [Wave("leaves", ("leaf1", "leaf2", "leaf3"), 4, budget), Wave("spines", ("spine1",), 1, 0)]


def test_happy_path_commits_with_timer_checks_then_confirms_on_one_connection(rig: Rig) -> None:
    out = rig.deployer(two_waves()).run(two_waves())
    assert out.ok and out.message == "all waves confirmed"
    assert sorted(out.changed) == rig.names and not out.failed and not out.rolled_back
    for n in rig.names:
        dev = rig.dev(n)
        assert dev.running == NEW.format(name=n) and not dev.pending and dev.revert_in == 300
        # One connection from backup to confirm: nothing closes or discards between commit and confirm.
        assert dev.calls == [
            "open", "has_pending_commit", "get_config", "load_replace_candidate", "compare_config",
            "commit_config", "check", "confirm_commit", "get_config", "close",
        ]  # fmt: skip
        assert rig.state(n) == "confirmed"
        devdir = rig.journal.dir / "devices" / n  # type: ignore[union-attr]
        assert (devdir / "before.conf").read_text() == BASE.format(name=n)
        assert (devdir / "after.conf").read_text() == NEW.format(name=n)
        assert "+   mtu 9216" in (devdir / "diff.txt").read_text()
    assert sorted(w for k, w, _ in rig.events if k == "diff") == rig.names  # shown (threads: any order)


def test_one_typed_channel_carries_host_tasks_waves_and_journal_states(rig: Rig) -> None:
    """Per host from the Nornir processor, per wave from the engine, per state from the journal: one listener
    type, fanned out to a list, a JSON Lines stream and a listener that breaks (it changes nothing)."""
    import io
    import json

    seen: list[DeployEvent] = []
    stream = io.StringIO()

    def broken(event: DeployEvent) -> None:
        raise BrokenPipeError("stdout closed")

    channel = Fanout([broken, seen.append, JsonEvents(stream)])
    rig.dev("leaf2").checks_pass = False
    deployer = rig.deployer(two_waves(budget=1), on_event=channel)
    assert rig.journal is not None
    rig.journal.listener = channel
    out = deployer.run(two_waves(budget=1))
    assert sorted(out.changed) == ["leaf1", "leaf3", "spine1"] and out.rolled_back == ["leaf2"]

    waves = [(e.kind, e.subject, e.ok) for e in seen if e.kind in (EventKind.WAVE_STARTED, EventKind.WAVE_FINISHED)]
    assert waves == [
        (EventKind.WAVE_STARTED, "leaves", None),
        (EventKind.WAVE_FINISHED, "leaves", True),  # one failure within the budget of 1
        (EventKind.WAVE_STARTED, "spines", None),
        (EventKind.WAVE_FINISHED, "spines", True),
    ]
    tasks = {(e.subject, e.task): e.ok for e in seen if e.kind is EventKind.TASK_DONE}
    assert tasks[("leaf1", "prepare")] and tasks[("leaf1", "commit")] and tasks[("leaf1", "confirm")]
    assert tasks[("leaf2", "check")] is False and tasks[("leaf2", "rollback")] is True
    states = [e.state for e in seen if e.kind is EventKind.DEVICE_STATE and e.subject == "leaf2"]
    assert states == ["backed_up", "committing", "committed", "rolling_back", "rolled_back"]
    [check] = [e for e in seen if e.kind is EventKind.CHECK_FAILED]
    assert check.subject == "leaf2" and "BGP session to spine1 is down" in check.message
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == len(seen) and all(line["schema_version"] == 1 for line in lines)
    [rolled] = [line for line in lines if line["kind"] == "device_state" and line["state"] == "rolled_back"]
    assert rolled["subject"] == "leaf2" and isinstance(rolled["at"], float)


def test_dry_run_diffs_and_journals_but_never_commits(rig: Rig) -> None:
    out = rig.deployer(two_waves(), dry_run=True).run(two_waves())
    assert out.ok and out.message == "dry run: nothing changed" and not out.changed
    for n in rig.names:
        dev = rig.dev(n)
        assert not {"commit_config", "confirm_commit", "rollback"} & set(dev.calls)
        assert "discard_config" in dev.calls
        assert dev.running == BASE.format(name=n)
        assert "+   mtu 9216" in (rig.journal.dir / "devices" / n / "diff.txt").read_text()  # type: ignore[union-attr]


def test_dry_run_leaves_a_pending_commit_alone(rig: Rig) -> None:
    leaf1 = rig.dev("leaf1")
    leaf1.rollback_point, leaf1.running, leaf1.pending = leaf1.running, NEW.format(name="leaf1"), True
    out = rig.deployer(two_waves(), dry_run=True).run(two_waves())
    assert out.ok and "rollback" not in leaf1.calls and leaf1.pending  # its own timer still decides
    assert any("left alone in a dry run" in m for k, w, m in rig.events if w == "leaf1")


def test_in_sync_device_is_not_committed(rig: Rig) -> None:
    configs = {n: NEW.format(name=n) for n in rig.names} | {"leaf2": BASE.format(name="leaf2")}
    out = rig.deployer(two_waves(), configs=configs).run(two_waves())
    assert out.ok and "leaf2" not in out.changed
    assert "commit_config" not in rig.dev("leaf2").calls
    assert rig.state("leaf2") == "in_sync"


def test_failure_within_budget_rolls_back_that_device_alone(rig: Rig) -> None:
    rig.dev("leaf2").checks_pass = False
    out = rig.deployer(two_waves(budget=1)).run(two_waves(budget=1))
    assert out.ok  # within budget: the rollout goes on
    assert out.rolled_back == ["leaf2"] and sorted(out.changed) == ["leaf1", "leaf3", "spine1"]
    assert out.failed == {"leaf2": "post-checks failed: BGP session to spine1 is down"}
    assert rig.dev("leaf2").running == BASE.format(name="leaf2")
    assert rig.dev("spine1").running == NEW.format(name="spine1")  # the next wave ran
    # Proof step after the rollback: backup loaded as a candidate, diffed (empty), discarded.
    calls = rig.dev("leaf2").calls
    i = calls.index("rollback")
    assert calls[i : i + 4] == ["rollback", "load_replace_candidate", "compare_config", "discard_config"]
    assert "confirm_commit" not in calls
    assert rig.state("leaf2") == "rolled_back" and rig.state("leaf1") == "confirmed"


def test_over_budget_rolls_back_the_whole_wave_and_later_waves_never_start(rig: Rig) -> None:
    rig.dev("leaf3").checks_pass = False
    out = rig.deployer(two_waves(budget=0)).run(two_waves(budget=0))
    assert not out.ok and out.message == "wave leaves failed: rollout stopped, 3 of its devices rolled back"
    assert ("rollback", "leaves", "rolled back 3 of 3 devices") in rig.events
    assert sorted(out.rolled_back) == ["leaf1", "leaf2", "leaf3"] and not out.changed
    for n in ("leaf1", "leaf2", "leaf3"):
        assert rig.dev(n).running == BASE.format(name=n)
        assert "confirm_commit" not in rig.dev(n).calls
        assert rig.state(n) == "rolled_back"
    assert rig.dev("spine1").calls == []  # never even connected
    assert rig.state("spine1") == "planned"


def test_connection_failure_over_budget_commits_nothing_and_discards_candidates(rig: Rig) -> None:
    rig.dev("leaf1").fail_open = True
    out = rig.deployer(two_waves()).run(two_waves())
    assert not out.ok and out.failed["leaf1"].startswith("ConnectionException: cannot connect to leaf1")
    for n in ("leaf2", "leaf3"):
        calls = rig.dev(n).calls
        assert "commit_config" not in calls
        # Engine fix: the loaded candidate is discarded explicitly (a Junos candidate survives a close).
        assert calls[-2:] == ["discard_config", "close"]
    assert rig.dev("spine1").calls == []
    assert rig.state("leaf1") == "failed"
    # RELIABILITY_TRIAL.md N5: not "that wave rolled back" when nothing in it was committed
    assert out.message == "wave leaves failed: rollout stopped, nothing in that wave was left committed"


def test_rejected_config_fails_that_device_before_any_change(rig: Rig) -> None:
    configs = {n: NEW.format(name=n) for n in rig.names} | {"leaf2": "bogus line\n"}
    out = rig.deployer(two_waves(budget=1), configs=configs).run(two_waves(budget=1))
    assert out.ok and out.failed == {"leaf2": "ReplaceConfigException: % Invalid input (at token 0: 'bogus')"}
    assert "commit_config" not in rig.dev("leaf2").calls and rig.dev("leaf2").running == BASE.format(name="leaf2")
    assert rig.state("leaf2") == "failed"


def test_commit_error_discards_and_over_budget_rolls_back_the_others(rig: Rig) -> None:
    rig.dev("leaf2").fail_commit = "% Failed to commit session"
    out = rig.deployer(two_waves()).run(two_waves())
    assert not out.ok
    assert out.failed["leaf2"] == "CommitError: % Failed to commit session"
    assert sorted(out.rolled_back) == ["leaf1", "leaf3"]
    assert rig.dev("leaf2").calls[-2:] == ["discard_config", "close"]  # engine fix: no candidate left behind
    assert all(rig.dev(n).running == BASE.format(name=n) for n in ("leaf1", "leaf2", "leaf3"))


def test_rollback_whose_proof_fails_is_reported_not_hidden(rig: Rig) -> None:
    rig.dev("leaf1").checks_pass = False
    rig.dev("leaf1").rollback_residue = True
    out = rig.deployer(two_waves(budget=1)).run(two_waves(budget=1))
    assert out.failed["leaf1"] == "ROLLBACK FAILED: RuntimeError: leaf1: rollback left a difference from the backup"
    assert "leaf1" not in out.rolled_back
    assert rig.state("leaf1") == "rollback_failed"
    err = load_run(rig.root, "fab", "run1").record.devices["leaf1"].error
    assert "-interface Ethernet9" in err  # what the device still has beyond its backup
    # RELIABILITY_TRIAL.md N4: the wave's rollback line says it failed, not "rolled back 1 devices"
    assert ("rollback", "leaves", "rolled back 0 of 1 devices; rollback FAILED on leaf1") in rig.events


def test_task_errors_do_not_print_tracebacks(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    rig.dev("leaf1").fail_open = True
    rig.deployer(two_waves()).run(two_waves())
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_resume_after_a_killed_run_rolls_back_its_pending_commit_first(rig: Rig) -> None:
    # A run that was killed after committing leaf1 (timer running) and before confirming it.
    waves = two_waves()
    killed = rig.deployer(waves, run_id="run0")
    journal = killed.journal
    journal.record.pid = _dead_pid()
    journal.save()
    journal.device_state("leaf1", "backed_up")
    journal.save()  # the last stage boundary the killed run reached
    journal.device_state("leaf1", "committed")  # journaled per device, run.json not rewritten yet
    leaf1 = rig.dev("leaf1")
    leaf1.rollback_point, leaf1.running, leaf1.pending = leaf1.running, NEW.format(name="leaf1"), True

    stale = interrupted_runs(rig.root, "fab")
    assert [j.record.run_id for j in stale] == ["run0"]
    # Journal fix: the per-device state.json is newer than run.json and wins on reading.
    assert stale[0].record.devices["leaf1"].state == "committed"

    # --resume: a new run re-diffs everything; leaf1's leftover pending commit is rolled back first, so the
    # backup is the config from before the killed run, not its half-confirmed change.
    configs = {n: NEW.format(name=n) for n in rig.names} | {"leaf1": NEW.replace("9216", "9100").format(name="leaf1")}
    out = rig.deployer(waves, configs=configs, run_id="run1").run(waves)
    assert out.ok
    assert leaf1.calls[:4] == ["open", "has_pending_commit", "rollback", "get_config"]
    assert (rig.journal.dir / "devices" / "leaf1" / "before.conf").read_text() == BASE.format(name="leaf1")  # type: ignore[union-attr]
    assert leaf1.running == configs["leaf1"] and not leaf1.pending
    assert ("note", "leaf1", "rolled back a pending commit left by an interrupted run") in rig.events


def test_concurrent_state_changes_are_all_readable_after_a_kill(rig: Rig) -> None:
    waves = [Wave("all", tuple(rig.names), 4, 0)]
    rig.deployer(waves)
    journal = rig.journal
    assert journal is not None
    threads = [threading.Thread(target=journal.device_state, args=(n, "committed")) for n in rig.names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # No journal.save() after the changes (the process "died"): every device still reads back committed.
    assert {d.state for d in load_run(rig.root, "fab", "run1").record.devices.values()} == {"committed"}


def test_an_unwritable_journal_stops_the_rollout_before_any_commit(rig: Rig) -> None:
    deployer = rig.deployer(two_waves())
    (deployer.journal.dir / "devices").write_text("not a directory")  # every device file write fails
    with pytest.raises(JournalError, match="cannot write the run journal"):
        deployer.run(two_waves())
    # The backups could not be stored, so nothing was committed (the stage boundary waits for them).
    assert all("commit_config" not in rig.dev(n).calls for n in rig.names)
    assert all(rig.dev(n).calls[-1] == "close" for n in ("leaf1", "leaf2", "leaf3"))


# --- drivers without a device-side timer (NAPALM nxos) ------------------------------------------------------
def test_no_timer_driver_is_refused_by_default_and_nothing_is_committed(rig: Rig) -> None:
    rig.dev("spine1").timer = False
    waves = [Wave("spines", ("spine1",), 1, 0)]
    out = rig.deployer(waves).run(waves)
    assert not out.ok
    assert out.failed["spine1"].startswith("NoConfirmTimer: FakeDriver has no device-side confirm timer")
    dev = rig.dev("spine1")
    assert dev.running == BASE.format(name="spine1") and dev.calls[-2:] == ["discard_config", "close"]


def test_no_timer_driver_in_client_mode_commits_plainly_and_netfab_rolls_back_itself(rig: Rig) -> None:
    for n in ("leaf1", "leaf2"):
        rig.dev(n).timer = False
    rig.dev("leaf2").checks_pass = False
    waves = [Wave("leaves", ("leaf1", "leaf2"), 2, 1)]
    out: DeployOutcome = rig.deployer(waves, confirm_mode="client").run(waves)
    assert out.ok and out.changed == ["leaf1"] and out.rolled_back == ["leaf2"]
    leaf1, leaf2 = rig.dev("leaf1"), rig.dev("leaf2")
    # First try with the timer (refused by the driver), then a plain commit; no confirm_commit call.
    assert leaf1.calls.count("commit_config") == 2 and "confirm_commit" not in leaf1.calls
    assert leaf1.running == NEW.format(name="leaf1") and leaf1.revert_in is None
    assert leaf2.running == BASE.format(name="leaf2") and "rollback" in leaf2.calls
    warn = [m for k, w, m in rig.events if k == "note" and w == "leaf1"]
    assert any("WITHOUT a device timer" in m for m in warn)


def test_a_failed_device_within_budget_is_a_partial_rollout_not_a_success(rig: Rig) -> None:
    # RELIABILITY_TRIAL.md F2-C: budget 1, leaf unreachable -> "all waves confirmed ... 1 failed", exit 0.
    rig.dev("leaf3").fail_open = True
    out = rig.deployer(two_waves(budget=1)).run(two_waves(budget=1))
    assert out.ok  # within budget, the rollout went on to the spines
    assert sorted(out.changed) == ["leaf1", "leaf2", "spine1"] and list(out.failed) == ["leaf3"]
    assert not out.complete  # what `netfab deploy` turns into exit 1
    assert out.message.startswith("partial:") and "1 devices failed" in out.message
    assert "all waves confirmed" not in out.message


def test_a_clean_rollout_is_complete(rig: Rig) -> None:
    out = rig.deployer(two_waves(budget=1)).run(two_waves(budget=1))
    assert out.complete and out.message == "all waves confirmed"


def test_a_run_without_a_listener_does_every_step_and_leaves_the_collector_as_it_found_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No listener: no Nornir processor builds events (HostEvents) and run() freezes the collector's view of
    # what lives through the run. Every call, state and file must be the same; the freeze must not outlive run().
    import gc

    from netfab.core import gcfreeze

    deployer = rig.deployer(two_waves())
    deployer._on_event = None
    # An earlier test in this process may have frozen the heap for good (as a CLI verb does on purpose): start
    # from none, or run() would rightly leave the freeze to its caller.
    monkeypatch.setattr(gcfreeze, "_for_good", False)
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    out = deployer.run(two_waves())
    assert gc.get_freeze_count() == 0
    assert out.ok and sorted(out.changed) == rig.names
    for n in rig.names:
        assert rig.dev(n).calls == [
            "open", "has_pending_commit", "get_config", "load_replace_candidate", "compare_config",
            "commit_config", "check", "confirm_commit", "get_config", "close",
        ]  # fmt: skip
        assert rig.state(n) == "confirmed"
    gcfreeze.for_good()  # a caller's freeze for the whole process (the CLI's) is the caller's to undo
    try:
        DEVICES.clear()
        for n in rig.names:
            DEVICES[n] = FakeDevice(n, BASE.format(name=n))
        assert rig.deployer(two_waves(), run_id="run2").run(two_waves()).ok
        assert gc.get_freeze_count() > 0  # not unfrozen (refcounting may have freed some frozen objects)
    finally:
        gc.unfreeze()
