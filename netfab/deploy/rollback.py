"""`netfab rollback RUN_ID`: restore every device a run touched to the config the run backed up."""

from __future__ import annotations

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netfab.core.events import DeployEvent, EventKind, Listener
from netfab.core.outcome import Err, host_outcome
from netfab.core.redact import MASK, restore_secrets
from netfab.deploy.connection import CONNECTION_NAME
from netfab.deploy.journal import Journal


def rollback_run(nr: Nornir, journal: Journal, on_event: Listener | None = None) -> tuple[list[str], dict[str, str]]:
    def emit(device: str, message: str) -> None:
        if on_event is not None:
            on_event(DeployEvent(EventKind.ROLLBACK, device, journal.redact(message)))

    backups = {
        name: text
        for name, rec in journal.record.devices.items()
        if rec.state in ("committed", "confirmed", "failed", "rollback_failed")
        and (text := journal.read_device_file(name, "before.conf")) is not None
    }
    order = [d for w in reversed(journal.record.waves) for d in w["devices"] if d in backups]

    def restore(task: Task) -> Result:
        name = task.host.name
        conn = task.host.get_connection(CONNECTION_NAME, task.nornir.config)
        if conn.has_pending_commit():
            conn.rollback()
        backup = backups[name]
        if MASK in backup:
            # The journal never holds secrets, so its backup has them masked; take each masked line's value
            # from the device's own running config, or refuse rather than push '********' as a secret.
            backup = restore_secrets(backup, conn.get_config(retrieve="running")["running"])
        backups[name] = backup
        conn.load_replace_candidate(config=backup)
        diff = conn.compare_config()
        if diff.strip():
            conn.commit_config()
        else:
            conn.discard_config()
        # Prove it: the backup must now diff empty against the running config.
        conn.load_replace_candidate(config=backups[name])
        residue = conn.compare_config()
        conn.discard_config()
        if residue.strip():
            raise RuntimeError(f"still differs from the backup after restore:\n{residue}")
        journal.device_state(name, "rolled_back")
        emit(name, "restored to the run's backup" if diff.strip() else "already at the run's backup")
        return Result(host=task.host, changed=bool(diff.strip()))

    restored: list[str] = []
    failures: dict[str, str] = {}
    try:
        # One device at a time in reverse wave order: the last changes are undone first.
        for name in order:
            agg = nr.filter(filter_func=lambda h, n=name: h.name == n).run(
                task=restore, raise_on_error=False, on_good=True, on_failed=True
            )
            outcome = host_outcome(agg.get(name))
            if isinstance(outcome, Err):
                failures[name] = journal.redact(outcome.error)
            else:
                restored.append(name)
    finally:
        nr.close_connections(on_good=True, on_failed=True)
    journal.finish("rolled_back" if not failures else "failed", f"rollback: {len(restored)} restored")
    return restored, failures
