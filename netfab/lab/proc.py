"""Running commands and stopping processes: argument lists only, errors as LabError with the tool's own words."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from netfab.lab.errors import LabError

POLL = 0.02  # seconds between checks while waiting on processes: short, since every wait is on the bring-up path


def run(
    argv: Sequence[str],
    *,
    input: str | None = None,
    check: bool = True,
    timeout: float = 60.0,
    what: str = "",
) -> subprocess.CompletedProcess[str]:
    """Run argv (never through a shell); on failure raise LabError naming `what` and the tool's stderr."""
    try:
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise LabError(f"{what or argv[0]}: command not found: {argv[0]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"{what or argv[0]}: no answer within {timeout:.0f} s") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip() or f"exit code {proc.returncode}").splitlines()
        raise LabError(f"{what or ' '.join(argv[:3])} failed: {' / '.join(detail[-5:])}")
    return proc


def in_netns(ns: str, argv: Sequence[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def read_pidfile(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _state(pid: int) -> str | None:
    """The process state letter from /proc/PID/stat, or None when the pid is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces: the state follows the last ')'.
    return stat.rpartition(")")[2].split()[0]


def alive(pid: int) -> bool:
    """Alive means running: PID 1 here reaps exited daemons 1-2 s late, so a zombie counts as dead."""
    return _state(pid) not in (None, "Z")


def cmdline_mentions(pid: int, marker: str) -> bool:
    """Whether a process's argv mentions marker: guards against killing a reused pid after a reboot."""
    try:
        return marker in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


def stop(pids: Iterable[int], first: signal.Signals = signal.SIGTERM, grace: float = 2.0) -> list[int]:
    """Send `first`, wait until gone or zombie, SIGKILL what is left; returns pids that would not die."""
    pending = {p for p in pids if p > 1 and p != os.getpid()}
    for sig, wait in ((first, grace), (signal.SIGKILL, 2.0)):
        for pid in pending:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while pending and time.monotonic() < deadline:
            pending = {p for p in pending if alive(p)}
            if pending:
                time.sleep(POLL)
        if not pending:
            break
    return sorted(pending)
