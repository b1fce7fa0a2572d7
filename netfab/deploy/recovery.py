"""What an interrupted run left behind, device by device, and what happens next: the refusal message.

Read from the journal only (nothing is contacted before the operator decides), so every sentence says
what the journal's last record for a device implies. Each device is in one of these positions:
  untouched (planned, in_sync, or failed before any change), at its backup (rolled_back),
  new and final (confirmed), or in flight with a device-side revert timer armed (committing, committed,
  confirming, rolling_back). The timer is armed before a commit changes anything and, since the driver's
  rollback fires that same timer instead of cancelling it, it also carries an interrupted rollback to its
  end on the device. Devices committed without a timer (playbook confirm: client) keep their change.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from datetime import datetime, timedelta

from netfab.deploy.journal import Journal


def _when(at: str, seconds: int) -> str:
    try:
        t = datetime.fromisoformat(at) + timedelta(seconds=seconds)
    except ValueError:
        return f"within {seconds} s of its commit"
    return f"by about {t.strftime('%H:%M:%S')} UTC"


def _names(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def device_positions(journal: Journal) -> list[tuple[str, list[str]]]:
    """[(what the journal says about these devices and what happens to them next, device names)]."""
    rec = journal.record
    timer = rec.confirm_timeout_s
    groups: dict[str, list[str]] = {}
    client = rec.confirm_mode == "client"
    for name, dev in rec.devices.items():
        state = dev.state
        if state in ("planned", "in_sync"):
            text = "untouched by this run"
        elif state == "backed_up":
            text = "backed up, diffed, not committed: unchanged"
        elif state == "failed":
            text = f"failed ({dev.error.splitlines()[0][:120] if dev.error else 'see the journal'}): left as it was"
        elif state == "rolled_back":
            text = "rolled back and verified against its backup: old config"
        elif state == "confirmed":
            text = "confirmed: keeps the new config"
        elif state == "rollback_failed":
            text = "its rollback FAILED: differs from its backup; run `netfab rollback` (below) and check it"
        elif client and state in ("committing", "committed", "confirming"):
            text = (
                "committed WITHOUT a device timer (playbook confirm: client): keeps the change until "
                "--resume or rollback undoes it"
            )
        elif state == "committing":
            text = (
                f"killed mid-commit; its {timer} s device timer was armed before any change: it reverts to "
                f"the backup by itself {_when(dev.at, timer)}"
            )
        elif state == "committed":
            text = f"committed, unconfirmed: its {timer} s device timer reverts it {_when(dev.at, timer)}"
        elif state == "confirming":
            text = (
                f"killed mid-confirm: either confirmed (new config kept) or its device timer reverts it "
                f"{_when(dev.at, timer)}; --resume or rollback settles which"
            )
        elif rec.state == "rolling_back":  # `netfab rollback` was restoring it (a commit under its own timer)
            text = (
                "being restored by `netfab rollback`: at its backup if the restore finished, otherwise its "
                "device timer puts it back where the rollback found it; re-run the rollback to finish"
            )
        else:  # the deploy's own wave rollback: it fires the commit's timer, which reverts on the device
            text = "rolling back: the revert runs on the device and finishes there by itself (old config)"
        if dev.first_host_script and state in _REVERTING:
            text += (
                "; FRR only: this was the first netfab host script here, so the kernel keeps what it set (MTU, ECN, "
                "ECMP hash) and `netfab rollback` reports the difference"
            )
        groups.setdefault(text, []).append(name)
    return sorted(groups.items(), key=lambda kv: kv[1][0])


_REVERTING = frozenset({"committing", "committed", "confirming", "rolling_back"})
"""States whose account above ends with a device-side revert of the commit (a confirm timer, a rollback)."""


def refusal(journal: Journal, intent: Iterable[str] | None = None) -> str:
    """The message a deploy (or remediation) prints instead of starting while `journal`'s run is interrupted."""
    rec = journal.record
    what = "rollback of run" if rec.state == "rolling_back" else f"{rec.verb} run"
    lines = [f"{what} {rec.run_id} was interrupted (pid {rec.pid} is gone, started {rec.started}). Its devices:"]
    for text, names in device_positions(journal):
        lines.append(f"  {_names(names)}: {text}")
    hint = rollback_hint(journal, intent)
    lines.append(
        "Next: nothing changes until you choose. `netfab deploy ... --resume` rolls back any commit still pending "
        f"(by firing its timer), then re-diffs and continues; `{hint}` restores every device the run touched "
        "to its backup and verifies it."
    )
    return "\n".join(lines)


def rollback_hint(journal: Journal, intent: Iterable[str] | None = None) -> str:
    rec = journal.record
    args = ["netfab", "rollback", rec.run_id]
    args += list(intent if intent is not None else rec.intent)
    if rec.lab:
        args += ["--lab", rec.lab]
    return shlex.join(args)
