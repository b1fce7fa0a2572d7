"""One writer per fabric: the lock that deploy, rollback and audit --remediate hold while they touch devices.

Two writers on one fabric overwrite each other's candidates in the device work dirs (fixed file names), roll
back each other's live commits as "interrupted", and both report success while the later one silently
replaces the earlier (RELIABILITY_TRIAL.md, fault 4). So every verb that can change a device takes
runs/<fabric>/.lock first and keeps it until it exits.

The lock is an flock(2) on that file: the kernel drops it when the holder dies, however it dies (SIGKILL,
OOM, a crash), so a dead holder can never block the fabric. The file's content names the holder (verb, run
id, pid, host, start time, command line) for the refusal message. A file that names a holder while nobody
holds the flock is a stale lock: its holder died without releasing it; the next run says so and takes over
(the interrupted run itself is then found by journal.interrupted_runs()).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from netfab.render.writer import safe_relpath

LOCK_NAME = ".lock"


class FabricLocked(RuntimeError):
    """Another live process holds the fabric's lock (exit 1: the fabric is busy, not a usage error)."""

    def __init__(self, path: Path, holder: Holder | None) -> None:
        self.path = path
        self.holder = holder
        who = holder.describe() if holder else "a process that has not written its name yet"
        super().__init__(
            f"fabric is locked by {who} ({path}); wait for it to finish. netfab never runs two writers on one "
            "fabric: they would overwrite each other's candidates and commits"
        )


class LockUnavailable(OSError):
    """The lock file cannot be created or opened (read-only or missing runs dir): a usage error (exit 2)."""


@dataclass
class Holder:
    verb: str
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    run_id: str = ""
    command: str = field(default_factory=lambda: " ".join(sys.argv)[:300])

    def describe(self) -> str:
        run = f", run {self.run_id}" if self.run_id else ""
        return f"`netfab {self.verb}` (pid {self.pid} on {self.host}, since {self.started}{run})"

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        try:
            data = json.loads(text)
            return cls(**{k: data[k] for k in ("verb", "pid", "host", "started", "run_id", "command") if k in data})
        except (ValueError, TypeError, KeyError):
            return None


class FabricLock:
    """Held from acquire() until release() or process exit. `stale` is the dead holder it replaced, if any."""

    def __init__(self, path: Path, fd: int, holder: Holder, stale: Holder | None) -> None:
        self.path = path
        self._fd: int | None = fd
        self.holder = holder
        self.stale = stale

    def set_run(self, run_id: str) -> None:
        """Name the run this holder is working on (known only after the lock is taken)."""
        self.holder.run_id = run_id
        self._write()

    def _write(self) -> None:
        if self._fd is None:
            return
        data = (json.dumps(asdict(self.holder), sort_keys=True) + "\n").encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is None:
            return
        # Empty first, then unlock: a file naming nobody is not mistaken for a stale lock. The file itself
        # stays: unlinking a flocked file races with a process that has just opened it.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FabricLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_path(runs: Path, fabric: str) -> Path:
    return runs / safe_relpath(fabric).name / LOCK_NAME


def acquire(runs: Path, fabric: str, verb: str) -> FabricLock:
    """Take the fabric's lock without waiting; FabricLocked names the live holder, LockUnavailable the path."""
    path = lock_path(runs, fabric)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise LockUnavailable(
            exc.errno or errno.EIO,
            f"cannot create the fabric lock {path}: {exc.strerror or exc}; "
            "point --runs at a writable directory on a local disk",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        text = _read(fd)
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise FabricLocked(path, Holder.parse(text)) from None
        raise LockUnavailable(exc.errno or errno.EIO, f"cannot lock {path}: {exc.strerror or exc}") from None
    stale = Holder.parse(_read(fd))
    lock = FabricLock(path, fd, Holder(verb), stale)
    lock._write()
    return lock


@contextlib.contextmanager
def held(runs: Path, fabric: str, verb: str) -> Iterator[FabricLock]:
    lock = acquire(runs, fabric, verb)
    try:
        yield lock
    finally:
        lock.release()


def stale_message(stale: Holder) -> str:
    return (
        f"taking over a stale fabric lock: {stale.describe()} ended without releasing it (killed or crashed); "
        "its run, if it changed anything, is checked below"
    )


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 65536, 0).decode("utf-8", "replace")
    except OSError:
        return ""
