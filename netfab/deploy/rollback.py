"""`netfab rollback RUN_ID`: restore every device a run touched to the config the run backed up."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netfab.core.events import DeployEvent, EventKind, Listener
from netfab.core.outcome import Err, host_outcome
from netfab.core.redact import MASK, restore_secrets
from netfab.deploy.connection import CONNECTION_NAME
from netfab.deploy.engine import comparable_kernel
from netfab.deploy.journal import DEVICE_STATES, Journal, JournalCorrupt

RESTORE_TIMER_S = 300
"""The device timer guarding each restore commit: long enough for a slow frr-reload, short enough to
settle a device whose rollback was killed well before anyone investigates."""

ROLLBACK_STATES = DEVICE_STATES - {"planned", "in_sync"}
"""Device states whose device this run may have changed (or was changing): every one is restored and
verified. backed_up is in: a run killed mid-commit journals that state while the device is changing."""


@dataclass
class DeviceRestore:
    device: str
    ok: bool
    message: str


@dataclass
class RollbackOutcome:
    devices: list[DeviceRestore] = field(default_factory=list)

    @property
    def restored(self) -> list[str]:
        return [d.device for d in self.devices if d.ok]

    @property
    def failures(self) -> dict[str, str]:
        return {d.device: d.message for d in self.devices if not d.ok}


@dataclass
class _Backup:
    config: str
    companions: dict[str, str]
    kernel: dict[str, Any] | None


def _backup(journal: Journal, name: str) -> _Backup | str:
    """The device's verified backup, or why there is none to push (named file, never a guess)."""
    try:
        config = journal.read_device_file(name, "before.conf")
        if config is None:
            return f"no backup in the journal ({journal.dir}/devices/{name}/before.conf is missing): left alone"
        if not config.strip():
            return f"{journal.dir}/devices/{name}/before.conf is empty: refusing to push it"
        companions = {}
        for key in journal.record.devices[name].companions:
            text = journal.read_device_file(name, f"before.{key}")
            if text is None:
                return f"{journal.dir}/devices/{name}/before.{key} is missing (run.json lists it): refusing"
            companions[key] = text
        kernel_text = journal.read_device_file(name, "before.kernel.json")
    except JournalCorrupt as exc:
        return str(exc)
    return _Backup(config, companions, json.loads(kernel_text) if kernel_text else None)


def _kernel_differences(before: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key in sorted(set(before) | set(now)):
        a, b = before.get(key), now.get(key)
        path = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out += _kernel_differences(a, b, path + ".")
        elif a != b:
            out.append(f"{path}: {json.dumps(b)} now, {json.dumps(a)} in the backup")
    return out


def rollback_run(nr: Nornir, journal: Journal, on_event: Listener | None = None) -> RollbackOutcome:
    """Restore every device the run may have changed to its backup (config and companions), each from the
    checked journal, in reverse wave order; verify each against the backup; account for every device.

    The run's state is `rolling_back` (with this pid) while it works and each device goes rolling_back ->
    rolled_back: a rollback that is killed is reported by the next deploy as interrupted, and re-running
    it continues (already restored devices verify empty and are left alone)."""

    def emit(device: str, message: str) -> None:
        if on_event is not None:
            on_event(DeployEvent(EventKind.ROLLBACK, device, journal.redact(message)))

    rec = journal.record
    touched = [d for w in reversed(rec.waves) for d in w["devices"] if rec.devices[d].state in ROLLBACK_STATES]
    outcome = RollbackOutcome()
    backups: dict[str, _Backup] = {}
    for name in touched:
        found = _backup(journal, name)
        state = rec.devices[name].state
        if isinstance(found, str) and state == "failed" and found.startswith("no backup"):
            # failed before its backup was taken (unreachable, say): this run never changed it
            outcome.devices.append(DeviceRestore(name, True, "failed before its backup: never changed, left alone"))
        elif isinstance(found, str) and state == "backed_up":
            # Never committed by this run (a commit journals `committing` first), so nothing to undo; its
            # unusable backup (cut short by a full disk, say) is not pushed.
            outcome.devices.append(DeviceRestore(name, True, f"never committed by this run, left alone ({found})"))
        elif isinstance(found, str):
            outcome.devices.append(DeviceRestore(name, False, found))
        else:
            backups[name] = found
    rec.state, rec.pid = "rolling_back", os.getpid()
    journal.save()

    def restore(task: Task) -> Result:
        name = task.host.name
        backup = backups[name]
        conn = task.host.get_connection(CONNECTION_NAME, task.nornir.config)
        journal.device_state(name, "rolling_back")
        notes = []
        if conn.has_pending_commit():
            conn.rollback()  # fires the device timer: finishes on the device even if we die now
            notes.append("its pending commit was rolled back")
        config = backup.config
        if MASK in config:
            # The journal never holds secrets, so its backup has them masked; take each masked line's value
            # from the device's own running config, or refuse rather than push '********' as a secret.
            config = restore_secrets(config, conn.get_config(retrieve="running")["running"])
        loader = getattr(conn, "load_companions", None)

        def load() -> str:
            conn.load_replace_candidate(config=config)
            if backup.companions and loader is not None:
                loader(backup.companions)
            return str(conn.compare_config())

        reader = getattr(conn, "get_kernel_state", None)

        def kernel_drift() -> list[str]:
            if backup.kernel is None or reader is None:
                return []
            return _kernel_differences(backup.kernel, comparable_kernel(reader()))

        diff = load()
        # The host script's diff is against the copy the driver last applied, not the kernel: a kernel that
        # differs from the backup is restored by re-running the backup's script even when the copies agree.
        if diff.strip() or kernel_drift():
            # Under its own device timer, confirmed once applied: a rollback killed mid-commit (between the
            # FRR half and the host script, say) is reverted to where it started, never left in between.
            try:
                conn.commit_config(revert_in=RESTORE_TIMER_S)
                conn.confirm_commit()
            except NotImplementedError:  # no device timer on this platform (NAPALM nxos)
                conn.commit_config()
            notes.append("restored to the run's backup")
        else:
            conn.discard_config()
            notes.append("already at the run's backup")
        # Prove it: the backup (config and companions) must now diff empty against the device ...
        residue = load()
        conn.discard_config()
        problems = [f"still differs from the backup after restore:\n{residue}"] if residue.strip() else []
        # ... and the kernel must be what it was when the run backed it up.
        if drift := kernel_drift():
            problems.append("kernel state differs from the backup: " + "; ".join(drift[:6]))
        if problems:
            journal.device_state(name, "rollback_failed", "\n".join(problems))
            raise RuntimeError("\n".join(problems))
        journal.device_state(name, "rolled_back")
        return Result(host=task.host, result="; ".join(notes), changed=bool(diff.strip()))

    try:
        # One device at a time in reverse wave order: the last changes are undone first.
        for name in [n for n in touched if n in backups]:
            agg = nr.filter(filter_func=lambda h, n=name: h.name == n).run(
                task=restore, raise_on_error=False, on_good=True, on_failed=True
            )
            result = host_outcome(agg.get(name))
            if isinstance(result, Err):
                message = journal.redact(result.error)
                outcome.devices.append(DeviceRestore(name, False, message))
                emit(name, f"FAILED: {message}")
            else:
                outcome.devices.append(DeviceRestore(name, True, str(result.value)))
                emit(name, str(result.value))
    finally:
        nr.close_connections(on_good=True, on_failed=True)
    failures = outcome.failures
    journal.finish(
        "rolled_back" if not failures else "failed",
        f"rollback: {len(outcome.restored)} restored, {len(failures)} failed",
    )
    return outcome
