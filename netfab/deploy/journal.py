"""The run journal: everything needed to explain and undo a deploy, written as it happens.

runs/<fabric>/<run-id>/run.json holds the run and wave states; devices/<name>/ holds before.conf,
intended.conf, after.conf, diff.txt and checks.json. Every file write is atomic and every text is
redacted first, so a crash leaves a readable journal and no secret ever reaches the disk.

Device files are written by background writer threads (device threads only queue them: doing the file
syscalls in 100 device threads made them queue for the GIL, ~10 % of a 2,000-device wave), backups
(before.*) first. A backup must survive a host crash before its device is changed, because a rollback after
one pushes it: the engine calls sync_backups() between the prepare and the commit stage, and
durable_backup(device) right before each commit. Both are a group commit: the backups are written without
fsync, and one syncfs of the journal's filesystem makes every backup written before it durable (one flush
per stage instead of four fsyncs per device, which serialised a 10,000-device wave on the writer). The
other device files (intended.conf, diff.txt, after.conf, checks.json) are never synced: a rollback does not
read them, and each is derived again from the build or the device; flush() waits for them (at the end of
run() and before any read). A device's state change is appended at once to states.jsonl (one O_APPEND
write, O(1)); run.json is rewritten when the engine finishes a stage and at the end, and load_run()
replays states.jsonl over it (a torn last line is ignored), so a killed run still reads back each
device's last state. (Rewriting run.json per state change cost ~40 ms per change at 2,000 devices, i.e.
minutes per wave, and concurrent rewrites could land out of order.)

Everything is checked on the way back in, because rollback and resume push what the journal says: run.json
carries a checksum of its own content, every device file has a line `<sha256> <size> <device>/<name>` appended
to devices.sha256 right after it (journals of older netfab: a `<name>.sha256` file beside it instead; one
append instead of one more file per device file halves the inodes a wave creates, the kernel's main cost), and
every states.jsonl line carries a checksum of itself. A mismatch, a truncation, a line that is not JSON or
names an unknown device or state raises JournalCorrupt naming the file (and the device): a truncated
before.conf is never pushed and a bogus line never silently drops a device. Only a torn *last* line (no
newline: the process died inside that one write) is skipped, as a crash can leave exactly that.

Test hook (inert unless set): NETFAB_TEST_KILL_AT="<state>:<n>" SIGKILLs this process right after the n-th
device state <state> is on disk. tests/faults drives it through every transition of deploy and rollback.
"""

from __future__ import annotations

import copy
import errno
import hashlib
import json
import os
import queue
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from netfab.core.events import DeployEvent, EventKind, Listener
from netfab.core.fs import atomic_write_text, sync_filesystem
from netfab.core.redact import redact
from netfab.render.writer import safe_relpath

DeviceState = Literal[
    "planned",
    "backed_up",
    "in_sync",
    "committing",
    "committed",
    "confirming",
    "confirmed",
    "rolling_back",
    "rolled_back",
    "failed",
    "rollback_failed",
]
DEVICE_STATES: frozenset[str] = frozenset(get_args(DeviceState))
RunState = Literal["running", "rolling_back", "completed", "failed", "rolled_back", "interrupted", "dry_run"]
RUN_STATES: frozenset[str] = frozenset(get_args(RunState))
LIVE_RUN_STATES = {"running", "rolling_back"}
"""A run in one of these whose process is gone was interrupted (killed, crashed, host lost)."""
FINAL_DEVICE_STATES = {"in_sync", "confirmed", "rolled_back"}
KILL_HOOK_ENV = "NETFAB_TEST_KILL_AT"
WRITERS = 2
"""Writer threads. Each file costs several syscalls, and a thread re-takes the GIL after each: a second
thread can run while the first is in the kernel. Measured at 2,000 devices, 1 and 2 were inside the noise
(docs/scale.md, "deploy, 2 Dec 2026"); more would only add GIL contention."""
CHECKSUMS = "devices.sha256"
"""The run's checksum log: one line per device file written, the last line for a file wins."""
SYNC_EVERY_S = 1.0
"""A writer syncs the backups written so far at most this often while a stage backs devices up."""
BACKUP_PREFIX = "before."
"""Device files named before.* are the backup a rollback pushes: written first, made durable before a commit."""


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class JournalError(RuntimeError):
    pass


class JournalCorrupt(JournalError):
    """A journal file fails its check: `path` and (where known) `device` say which."""

    def __init__(self, path: Path, problem: str, device: str = "") -> None:
        self.path = path
        self.device = device
        who = f" (device {device})" if device else ""
        super().__init__(f"{path}{who}: {problem}; refusing to use it (restore it from a backup or undo by hand)")


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_crc(device: str, state: str, error: str, at: str) -> str:
    return checksum(json.dumps([device, state, error, at]).encode("utf-8"))[:16]


@dataclass
class DeviceRecord:
    name: str
    wave: str
    state: DeviceState = "planned"
    error: str = ""
    diff_lines: int = 0
    at: str = ""
    """UTC time of the last state change (the refusal message says when a device timer fires)."""
    companions: list[str] = field(default_factory=list)
    """Keys of the companion files backed up as before.<key> (frr: host.sh, the host script last applied)."""
    first_host_script: bool = False
    """This run brings the device its first netfab host script: there is no earlier one for a revert (the
    device timer, a rollback) to re-run, so FRR goes back and the kernel keeps what the new script set."""


@dataclass
class RunRecord:
    run_id: str
    fabric: str
    intent: list[str]
    playbook: str
    dry_run: bool
    state: RunState = "running"
    pid: int = field(default_factory=os.getpid)
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    finished: str = ""
    waves: list[dict[str, Any]] = field(default_factory=list)
    devices: dict[str, DeviceRecord] = field(default_factory=dict)
    message: str = ""
    verb: str = "deploy"
    lab: str | None = None
    """The lab prefix the run went to (None: the production inventory); the refusal hint repeats it."""
    confirm_timeout_s: int = 0
    confirm_mode: str = "device"


class Journal:
    def __init__(self, root: Path, record: RunRecord, secrets_: tuple[str, ...] = ()) -> None:
        self.dir = root / safe_relpath(record.fabric).name / safe_relpath(record.run_id).name
        self.record = record
        self._secrets = secrets_
        self.listener: Listener | None = None
        """Gets a DEVICE_STATE event after every device state change (the CLI's progress bar hangs off it)."""
        self._lock = threading.Lock()
        self._states_fd: int | None = None
        self._init_writers()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot create the run journal {self.dir}: {exc}") from exc
        self.save()

    def redact(self, text: str) -> str:
        """Mask this run's secrets and secret-bearing config values (for anything shown or stored)."""
        return redact(text, self._secrets)

    def _init_writers(self) -> None:
        self._sums_fd: int | None = None
        self._sums: dict[str, tuple[str, str]] = {}
        self._sums_read = -2
        self._folders: set[Path] = set()
        self._writes: queue.PriorityQueue[tuple[int, int, str, Path, str]] = queue.PriorityQueue()
        self._queued = 0
        self._writers = 0
        self._write_error: BaseException | None = None
        # Backup bookkeeping, all under _durable: how many backup files each device still has queued, the
        # write count at which its last one was on disk, how many backup writes are done, and how many of
        # those the last sync covered.
        self._durable = threading.Condition()
        self._backups_pending: dict[str, int] = {}
        self._backup_mark: dict[str, int] = {}
        self._backup_failed: dict[str, BaseException] = {}
        self._backups_written = 0
        self._backups_synced = 0
        self._syncing = False
        self._last_sync = time.monotonic()

    # --- writing -------------------------------------------------------------------------------------
    def save(self) -> None:
        """Rewrite run.json (a device file that failed to write raises here: disk full...)."""
        self._raise_write_error()
        # Snapshot and write under one lock: device threads save concurrently, and an older snapshot
        # must never replace a newer run.json.
        with self._lock:
            text = _run_json(_record_dict(self.record))
            try:
                atomic_write_text(self.dir / "run.json", text)
            except OSError as exc:  # full, read-only or gone: the caller says where each device stands
                raise JournalError(f"cannot write the run journal in {self.dir}: {exc}") from exc

    def device_file(self, device: str, name: str, text: str) -> None:
        """Queue a device file for the writer threads; on disk (redacted, atomically) by the next flush().
        A backup (before.*) goes ahead of every other file and is durable once durable_backup() returns."""
        backup = name.startswith(BACKUP_PREFIX)
        with self._durable:  # a writer that is about to exit idle checks the queue under this lock
            if backup:
                self._backups_pending[device] = self._backups_pending.get(device, 0) + 1
            self._queued += 1
            self._writes.put((0 if backup else 1, self._queued, device, self._device_dir(device) / name, text))
            if self._writers < WRITERS:
                self._writers += 1
                threading.Thread(target=self._write_queued, name="netfab-journal", daemon=True).start()

    def _device_dir(self, device: str) -> Path:
        return self.dir / "devices" / safe_relpath(device).name

    def flush(self) -> None:
        """Block until every queued device file is written; a failed write raises here (disk full...)."""
        self._writes.join()
        self._raise_write_error()

    def _raise_write_error(self) -> None:
        if self._write_error is not None:
            error, self._write_error = self._write_error, None
            raise JournalError(f"cannot write the run journal in {self.dir}: {error}") from error

    def sync_backups(self) -> None:
        """Block until every backup queued so far is written and durable (one sync for all of them)."""
        with self._durable:
            while any(self._backups_pending.values()):
                self._durable.wait()
            if self._backup_failed:
                self._backup_error(*next(iter(self._backup_failed.items())))
            mark = self._backups_written
        self._sync_to(mark)

    def durable_backup(self, device: str) -> None:
        """Block until `device`'s backup is written and durable; JournalError if it cannot be. Call it right
        before the device is changed: after sync_backups() it returns at once."""
        with self._durable:
            while self._backups_pending.get(device):
                self._durable.wait()
            if device in self._backup_failed:
                self._backup_error(device, self._backup_failed[device])
            mark = self._backup_mark.get(device, 0)
        self._sync_to(mark)

    def _backup_error(self, device: str, error: BaseException) -> None:
        raise JournalError(f"cannot write the backup of {device} in {self.dir}: {error}") from error

    def _sync_to(self, mark: int, background: bool = False) -> None:
        """Make the first `mark` backup writes durable. Callers that arrive while a sync runs wait for it and
        share the next one (group commit): one syncfs serves every device waiting. A background sync (a
        writer's, see _write_queued) leaves any write error for the next caller who must know."""
        with self._durable:
            while True:
                if self._write_error is not None and background:
                    return
                self._raise_write_error()
                if self._backups_synced >= mark:
                    return
                if self._syncing:
                    if background:
                        return
                    self._durable.wait()
                    continue
                self._syncing, covered = True, self._backups_written
                self._durable.release()
                try:
                    sync_filesystem(self.dir)
                except OSError as exc:
                    self._write_error = self._write_error or exc
                finally:
                    self._durable.acquire()
                    self._syncing = False
                    self._last_sync = time.monotonic()
                    if self._write_error is None:
                        self._backups_synced = max(self._backups_synced, covered)
                    self._durable.notify_all()

    def _write_queued(self) -> None:
        while True:
            try:
                _, _, device, path, text = self._writes.get(timeout=0.5)
            except queue.Empty:
                with self._durable:
                    if self._writes.empty():  # nothing can be queued while we hold the lock: exit idle
                        self._writers -= 1
                        return
                continue
            backup = path.name.startswith(BACKUP_PREFIX)
            try:
                if path.parent not in self._folders:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    self._folders.add(path.parent)
                stored = redact(text, self._secrets)
                # Never fsynced here: a backup is made durable by the sync the engine waits for before a
                # commit (durable_backup), the other files need not survive a host crash (module doc).
                atomic_write_text(path, stored, durable=False)
                # The checksum is appended after the file: a crash between the two leaves the file without
                # one (refused), never a wrong file that passes. One write(2) with O_APPEND lands whole.
                data = stored.encode("utf-8")
                line = f"{checksum(data)} {len(data)} {path.parent.name}/{path.name}\n"
                _append(self._checksums_fd(), line.encode("utf-8"))
            except BaseException as exc:
                with self._durable:
                    self._write_error = self._write_error or exc
                    if backup:  # kept apart: this device must never pass durable_backup()
                        self._backup_failed.setdefault(device, exc)
            finally:
                try:
                    if backup:
                        with self._durable:
                            self._backups_written += 1
                            self._backups_pending[device] -= 1
                            self._backup_mark[device] = self._backups_written
                            self._durable.notify_all()
                    if backup and time.monotonic() - self._last_sync >= SYNC_EVERY_S:
                        # Sync as the backups come in, so the sync before the first commit has only the last
                        # second of writes to flush (it flushed a whole prepare stage: ~1 s at 10,000 devices).
                        self._sync_to(self._backups_written, background=True)
                finally:
                    self._writes.task_done()

    def device_state(self, device: str, state: DeviceState, error: str = "") -> None:
        rec = self.record.devices[device]
        rec.state = state
        rec.at = datetime.now(UTC).isoformat(timespec="seconds")
        if error:
            rec.error = redact(error, self._secrets)
        crc = _line_crc(device, rec.state, rec.error, rec.at)
        line = json.dumps({"device": device, "state": rec.state, "error": rec.error, "at": rec.at, "crc": crc}) + "\n"
        try:
            fd = self._states_fd if self._states_fd is not None else self._open_states()
            # No lock around the write: one write(2) with O_APPEND lands whole at the end of the file, never
            # interleaved with another thread's, and a device's own lines come from its one thread, in order.
            # (Holding a lock across the syscall made 100 device threads convoy on it and the GIL: ~4 ms per
            # state change at 2,000 devices.)
            _append(fd, line.encode("utf-8"))
        except OSError as exc:
            raise JournalError(f"cannot write the run journal in {self.dir}: {exc}") from exc
        _kill_hook(state)
        if self.listener is not None:
            self.listener(DeployEvent(EventKind.DEVICE_STATE, device, rec.error if error else "", state=state))

    def _checksums_fd(self) -> int:
        with self._lock:
            if self._sums_fd is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
                self._sums_fd = os.open(self.dir / CHECKSUMS, flags, 0o644)
            return self._sums_fd

    def _open_states(self) -> int:
        with self._lock:
            if self._states_fd is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
                self._states_fd = os.open(self.dir / "states.jsonl", flags, 0o644)
            return self._states_fd

    def finish(self, state: RunState, message: str = "") -> None:
        self.record.state = state
        self.record.message = redact(message, self._secrets)
        self.record.finished = datetime.now(UTC).isoformat(timespec="seconds")
        self.save()
        self.close()

    def close(self) -> None:
        with self._lock:
            for fd in (self._states_fd, self._sums_fd):
                if fd is not None:
                    os.close(fd)
            self._states_fd = self._sums_fd = None

    # --- reading -------------------------------------------------------------------------------------
    def read_device_file(self, device: str, name: str) -> str | None:
        """A device file as written, or None if the run never wrote it; JournalCorrupt if it fails its check."""
        self.flush()
        path = self.dir / "devices" / safe_relpath(device).name / name
        if not path.is_file():
            return None
        data = path.read_bytes()
        want, size = self._checksum_of(path, device)
        if len(data) != int(size):
            raise JournalCorrupt(path, f"truncated or extended: {len(data)} bytes, {size} were written", device)
        if checksum(data) != want:
            raise JournalCorrupt(path, "content does not match the checksum written with it", device)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise JournalCorrupt(path, "not UTF-8 text", device) from None

    def _checksum_of(self, path: Path, device: str) -> tuple[str, str]:
        """(sha256, size) written with `path`: from devices.sha256, else from an older netfab's sidecar file."""
        log = self.dir / CHECKSUMS
        try:
            size_now = log.stat().st_size
        except FileNotFoundError:
            size_now = -1
        if self._sums_read != size_now:  # read once, again only when it grew
            self._sums = _read_checksums(log) if size_now >= 0 else {}
            self._sums_read = size_now
        found = self._sums.get(f"{path.parent.name}/{path.name}")
        if found is None:
            side = path.with_name(path.name + ".sha256")
            try:
                want, size = side.read_text(encoding="ascii").split()
            except (OSError, ValueError):
                problem = f"no checksum for it in the checksum file {CHECKSUMS} (missing or cut short)"
                raise JournalCorrupt(path, problem, device) from None
            found = (want, size)
        if not found[1].isdigit():
            raise JournalCorrupt(path, "its checksum line is damaged", device)
        return found


def _append(fd: int, line: bytes) -> None:
    """One O_APPEND write(2) of a whole line. A short write (the disk filled up mid-line) is an error, not a
    success: the line's file or state change must not count as recorded (a reader refuses the torn line)."""
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(errno.ENOSPC, f"short write to the journal ({written} of {len(line)} bytes)")


def _read_checksums(log: Path) -> dict[str, tuple[str, str]]:
    try:
        text = log.read_bytes().decode("ascii", "replace")
    except OSError as exc:
        raise JournalCorrupt(log, f"unreadable: {exc.strerror or exc}") from None
    out: dict[str, tuple[str, str]] = {}
    # A torn last line (no newline: the process died inside that write) is left out with the rest of it:
    # its file then has no checksum and is refused. A damaged line can only make a file fail its check.
    for raw in text.split("\n")[:-1]:
        parts = raw.split(" ", 2)
        if len(parts) == 3:
            out[parts[2]] = (parts[0], parts[1])
    return out


def _run_json(data: dict[str, Any]) -> str:
    """run.json's text: `data` plus the checksum of its own indented, key-sorted JSON (_read_run_json checks it).

    "checksum" sorts before every other key, so the document with it is the body with one line inserted
    after the brace: one encode instead of two (the pure-Python indented encoder was ~0.2 s per save at
    10,000 devices, paid at every stage boundary)."""
    body = _indented_json(data)
    digest = checksum(body.encode("utf-8"))
    if data and min(data) > "checksum":
        return f'{{\n  "checksum": "{digest}",\n{body[2:]}\n'
    return json.dumps({**data, "checksum": digest}, indent=2, sort_keys=True) + "\n"


class _NotPlain(Exception):
    """A value _dump does not encode itself (a str or int subclass, a non-str key...): json.dumps does it."""


_encode_str = json.encoder.encode_basestring_ascii  # the C encoder json.dumps itself uses for strings


def _indented_json(data: dict[str, Any]) -> str:
    """json.dumps(data, indent=2, sort_keys=True), the same text, ~4x faster. With indent, json.dumps runs its
    pure-Python encoder (one generator frame per value): ~0.24 s per run.json at 10,000 devices, on the
    engine's one thread between two stages, six times a wave, while the device threads wait for it."""
    try:
        return _dump(data, "\n")
    except _NotPlain:
        return json.dumps(data, indent=2, sort_keys=True)


def _dump(obj: Any, newline: str) -> str:
    """`obj` as json.dumps(indent=2, sort_keys=True) writes it at the depth whose line start is `newline`.
    Exact types only: anything else raises _NotPlain (its subclasses encode as json.dumps decides)."""
    kind = type(obj)
    if kind is str:
        return _encode_str(obj)
    if kind is dict:
        if not obj:
            return "{}"
        if set(map(type, obj)) != _ONLY_STR:
            raise _NotPlain
        inner = newline + "  "
        records = _dump_records(obj, inner)
        if records is not None:
            return "{" + inner + ("," + inner).join(records) + newline + "}"
        items = []
        for key in sorted(obj):
            value = obj[key]
            # Strings inline: they are most of the values (one call less each, ~10,000 records a save).
            text = _encode_str(value) if type(value) is str else _dump(value, inner)
            items.append(f"{_encode_str(key)}: {text}")
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if kind is list or kind is tuple:
        if not obj:
            return "[]"
        inner = newline + "  "
        if set(map(type, obj)) == _ONLY_STR:  # a wave's device names
            return "[" + inner + ("," + inner).join(map(_encode_str, obj)) + newline + "]"
        return "[" + inner + ("," + inner).join([_dump(item, inner) for item in obj]) + newline + "]"
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if kind is int:
        return int.__repr__(obj)
    if kind is float and obj == obj and obj not in (_INF, -_INF):
        return float.__repr__(obj)
    raise _NotPlain  # NaN and infinities, subclasses, anything json.dumps would refuse or convert


def _dump_records(obj: dict[str, Any], inner: str) -> list[str] | None:
    """The items of a table of records (run.json's devices: one dict per device, all with the same keys), or
    None if `obj` is not one. The keys are sorted and formatted once for the table instead of once a record."""
    first = next(iter(obj.values()))
    if type(first) is not dict or not first or set(map(type, obj.values())) != _ONLY_DICT:
        return None
    fields_ = sorted(first)
    if set(map(type, fields_)) != _ONLY_STR:
        return None
    field_set = set(fields_)
    deeper = inner + "  "
    heads = [f"{_encode_str(f)}: " for f in fields_]
    joiner = "," + deeper
    items = []
    for key in sorted(obj):
        record = obj[key]
        if record.keys() != field_set:
            return None
        parts = []
        for head, f in zip(heads, fields_, strict=True):
            value = record[f]
            parts.append(head + (_encode_str(value) if type(value) is str else _dump(value, deeper)))
        items.append(f"{_encode_str(key)}: {{{deeper}{joiner.join(parts)}{inner}}}")
    return items


_ONLY_STR = {str}
_ONLY_DICT = {dict}
_INF = float("inf")


def _record_dict(record: RunRecord) -> dict[str, Any]:
    """asdict(record), 20x faster (it ran once per stage over thousands of DeviceRecords)."""
    out = {f.name: copy.deepcopy(getattr(record, f.name)) for f in fields(record) if f.name != "devices"}
    out["devices"] = {name: dict(vars(rec)) for name, rec in record.devices.items()}
    return out


_KILL_COUNTS: dict[str, int] = {}


_KILL_LOCK = threading.Lock()


def _kill_hook(state: str) -> None:
    """The fault suite's kill switch (see module doc). Called right after the state's line is written."""
    spec = os.environ.get(KILL_HOOK_ENV)
    if not spec:
        return
    want, _, nth = spec.partition(":")
    if want != state:
        return
    with _KILL_LOCK:  # the count is shared by every device thread
        _KILL_COUNTS[state] = _KILL_COUNTS.get(state, 0) + 1
        if _KILL_COUNTS[state] == int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)


def _read_run_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise  # no such run: the caller says so (a missing run is not a corrupt one)
    except OSError as exc:
        raise JournalCorrupt(path, f"unreadable: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JournalCorrupt(path, f"not a complete JSON document ({exc})") from None
    if not isinstance(data, dict) or "checksum" not in data:
        raise JournalCorrupt(path, "no checksum: not written by this netfab, or cut short")
    want = data.pop("checksum")
    if checksum(json.dumps(data, indent=2, sort_keys=True).encode("utf-8")) != want:
        raise JournalCorrupt(path, "content does not match the checksum written with it")
    return data


def _replay_states(path: Path, devices: dict[str, DeviceRecord]) -> None:
    """Apply states.jsonl (every state change, in order, newer than run.json) to `devices`."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JournalCorrupt(path, f"not UTF-8 at byte {exc.start}") from None
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline; otherwise a write the crash cut short
    for number, raw in enumerate(lines, 1):
        try:
            change = json.loads(raw)
            device, state = str(change["device"]), str(change["state"])
            error, at, crc = str(change.get("error", "")), str(change.get("at", "")), str(change["crc"])
        except (ValueError, KeyError, TypeError):
            raise JournalCorrupt(path, f"line {number} is not a state record: {raw[:80]!r}") from None
        if crc != _line_crc(device, state, error, at):
            raise JournalCorrupt(path, f"line {number} does not match its checksum", device)
        if device not in devices:
            raise JournalCorrupt(path, f"line {number} names a device the run does not have", device)
        if state not in DEVICE_STATES:
            raise JournalCorrupt(path, f"line {number} has an unknown state {state!r}", device)
        rec = devices[device]
        rec.state, rec.error, rec.at = state, error, at  # type: ignore[assignment]
    # `torn` (a last line without its newline) is skipped: only the last write can be cut short by a crash,
    # and the step it recorded had just finished, so the device's previous state plus its device-side
    # timer still describe it.
    del torn


def load_run(root: Path, fabric: str, run_id: str) -> Journal:
    """Read a run back, checked (JournalCorrupt names the file and device that fail)."""
    path = root / safe_relpath(fabric).name / safe_relpath(run_id).name / "run.json"
    data = _read_run_json(path)
    try:
        devices = {k: DeviceRecord(**v) for k, v in data.pop("devices").items()}
        for name, rec in devices.items():
            if rec.state not in DEVICE_STATES:
                raise JournalCorrupt(path, f"unknown device state {rec.state!r}", name)
        if data.get("state") not in RUN_STATES:
            raise JournalCorrupt(path, f"unknown run state {data.get('state')!r}")
        states = path.parent / "states.jsonl"
        if states.is_file():
            _replay_states(states, devices)
        record = RunRecord(**data, devices=devices)
    except (KeyError, TypeError) as exc:
        raise JournalCorrupt(path, f"not a run record ({exc})") from None
    journal = Journal.__new__(Journal)
    journal.dir = path.parent
    journal.record = record
    journal._secrets = ()
    journal.listener = None
    journal._lock = threading.Lock()
    journal._states_fd = None
    journal._init_writers()
    return journal


def _pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


@dataclass
class RunScan:
    interrupted: list[Journal]
    """Runs that say running/rolling_back but whose process is gone (killed, crashed). Dry runs never
    count: they change nothing."""
    unreadable: list[JournalCorrupt]
    """Runs whose journal fails its check: named, and not allowed to block unrelated runs."""


def scan_runs(root: Path, fabric: str) -> RunScan:
    base = root / safe_relpath(fabric).name
    scan = RunScan([], [])
    if not base.is_dir():
        return scan
    for run_dir in sorted(base.iterdir()):
        if not (run_dir / "run.json").exists():
            continue
        try:
            journal = load_run(root, fabric, run_dir.name)
        except JournalCorrupt as exc:
            scan.unreadable.append(exc)
            continue
        rec = journal.record
        if rec.state in LIVE_RUN_STATES and not rec.dry_run and not _pid_alive(rec.pid):
            scan.interrupted.append(journal)
    return scan


def interrupted_runs(root: Path, fabric: str) -> list[Journal]:
    return scan_runs(root, fabric).interrupted
