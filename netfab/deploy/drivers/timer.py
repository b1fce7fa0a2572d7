"""A commit-confirm timer that lives on the DEVICE, for platforms without one (FRR/Linux, SONiC).

The revert must happen even if the deploy process dies or its SSH session drops, so the timer is a detached
shell script on the device (setsid, stdio on /dev/null: the SSH channel closes without waiting for it).
All state is in files under the driver's private work dir, so a *new* session (a restarted deploy) sees a
pending commit and can confirm or roll it back.

Files (in `directory`):
  revert.sh     the timer script            revert.pid    its pid while armed (pending)
  revert.fired  its pid while reverting      revert.rc     exit status of the last revert
  revert.log    output of the last revert    revert.cancel transient, while a confirm claims the timer

Confirm and expiry race for one atomic rename of revert.pid: the confirm renames it to revert.cancel,
the timer to revert.fired. Exactly one wins, so a confirm never reports success for a config that is being
reverted, and a revert never runs after a successful confirm.

A rollback never cancels the timer: it FIRES it now (SIGUSR1 cuts the sleep short, fire_command), so the
revert runs inside the detached timer process and finishes on the device even if the client dies the
moment after. (Cancel-then-restore left a device on its failing, unconfirmed config with nothing to revert
it when the deploy died between the two: RELIABILITY_TRIAL.md F1-A.) Where no timer is armed, the driver
arms a fresh one and fires it at once, so every restore runs that way.
"""

from __future__ import annotations

import shlex
from enum import StrEnum

SCRIPT = "revert.sh"


class TimerState(StrEnum):
    PENDING = "pending"  # armed, counting down
    RUNNING = "running"  # expired, the revert is running right now
    FIRED = "fired"  # expired and reverted (see revert.rc / revert.log)
    LOST = "lost"  # a pid file whose process is gone (device rebooted?): nobody will revert
    NONE = "none"  # nothing armed since the last confirm/cancel
    CANCELLED = "cancelled"  # only from cancel_command: this call disarmed it


# Shell helper: is $1 a live (non-zombie) process running our timer script? The cmdline check keeps a
# recycled pid (after a reboot) from being mistaken for the timer, and from being killed by a cancel.
_IS_TIMER = (
    'is_timer() { [ -n "$1" ] && [ -r /proc/$1/cmdline ] '
    "&& ! grep -q '^State:.*Z' /proc/$1/status 2>/dev/null "
    f"&& tr '\\000' ' ' </proc/$1/cmdline | grep -q {SCRIPT}; }}"
)


def script(directory: str, delay_s: int, revert_command: str) -> str:
    """The timer script: sleep, claim the revert, run `revert_command` (a shell snippet) in `directory`."""
    if delay_s < 1:
        raise ValueError("revert_in must be at least 1 second")
    return f"""#!/bin/sh
# netfab commit-confirm timer: reverts the last commit unless confirmed within {delay_s} s.
cd {shlex.quote(directory)} || exit 1
trap '' HUP INT            # survive the deploy's session ending
trap 'kill $sp 2>/dev/null; exit 0' TERM    # a confirm/cancel
trap 'kill $sp 2>/dev/null' USR1           # a rollback: revert now
echo $$ > revert.pid.tmp && mv -f revert.pid.tmp revert.pid
sleep {int(delay_s)} &
sp=$!
wait $sp
mv revert.pid revert.fired 2>/dev/null || exit 0   # a confirm won the race
trap '' TERM USR1          # claimed: finish the revert whatever happens
( {revert_command} ) >revert.log 2>&1
echo $? > revert.rc.tmp && mv -f revert.rc.tmp revert.rc
rm -f revert.fired
"""


def arm_command(directory: str) -> str:
    """Start the (already uploaded) script detached; print its pid once it is armed, rc!=0 if it never was."""
    d = shlex.quote(directory)
    return (
        f"cd {d} && rm -f revert.rc revert.fired revert.cancel revert.pid && "
        "if command -v setsid >/dev/null 2>&1; then "
        f"setsid sh {SCRIPT} </dev/null >/dev/null 2>&1 & "
        f"else nohup sh {SCRIPT} </dev/null >/dev/null 2>&1 & fi; "
        "i=0; while [ ! -s revert.pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; "
        "[ -s revert.pid ] && cat revert.pid"
    )


def status_command(directory: str) -> str:
    """Print one TimerState value (pending/running/fired/lost/none)."""
    d = shlex.quote(directory)
    return (
        f"{_IS_TIMER}; cd {d} 2>/dev/null || {{ echo none; exit 0; }}; "
        'if [ -f revert.pid ]; then if is_timer "$(cat revert.pid)"; then echo pending; else echo lost; fi; '
        'elif [ -f revert.fired ]; then if is_timer "$(cat revert.fired)"; then echo running; else echo lost; fi; '
        "elif [ -f revert.rc ]; then echo fired; "
        "else echo none; fi"
    )


def cancel_command(directory: str) -> str:
    """Disarm the timer if it is still counting down; print cancelled, or the state that prevented it."""
    d = shlex.quote(directory)
    return (
        f"{_IS_TIMER}; cd {d} 2>/dev/null || {{ echo none; exit 0; }}; "
        "if mv revert.pid revert.cancel 2>/dev/null; then p=$(cat revert.cancel); "
        'if is_timer "$p"; then kill -TERM "$p"; rm -f revert.cancel; echo cancelled; '
        "else rm -f revert.cancel; echo lost; fi; "
        "elif [ -f revert.fired ]; then echo running; "
        "elif [ -f revert.rc ]; then echo fired; "
        "else echo none; fi"
    )


def fire_command(directory: str) -> str:
    """Make an armed timer revert now: print `signalled`, or the state that prevented it (running/fired/lost/
    none). After `signalled` the revert is the timer's: it runs to its end on the device whatever the client
    does."""
    d = shlex.quote(directory)
    return (
        f"{_IS_TIMER}; cd {d} 2>/dev/null || {{ echo none; exit 0; }}; "
        'if [ -f revert.pid ] && p=$(cat revert.pid) && is_timer "$p"; then kill -USR1 "$p" && echo signalled; '
        "elif [ -f revert.pid ]; then echo lost; "
        'elif [ -f revert.fired ]; then if is_timer "$(cat revert.fired)"; then echo running; else echo lost; fi; '
        "elif [ -f revert.rc ]; then echo fired; "
        "else echo none; fi"
    )


def result_command(directory: str) -> str:
    """Print the last revert's exit status, a separator line, then the tail of its log."""
    d = shlex.quote(directory)
    return f"cd {d} && cat revert.rc 2>/dev/null || echo missing; echo @@log; tail -c 3000 revert.log 2>/dev/null"


def clear_command(directory: str) -> str:
    """Forget a finished revert (after a rollback/commit has superseded it)."""
    return f"cd {shlex.quote(directory)} && rm -f revert.rc revert.log"


def parse_state(output: str) -> TimerState:
    word = output.strip().splitlines()[-1].strip() if output.strip() else ""
    try:
        return TimerState(word)
    except ValueError as exc:
        raise ValueError(f"unexpected timer state output: {output!r}") from exc
