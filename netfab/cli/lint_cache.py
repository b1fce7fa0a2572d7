"""A content-addressed cache of `netfab lint` results, so linting an intent that did not change (a CI re-run,
a pre-commit hook over untouched files, an editor saving twice) costs a digest instead of a fabric design.

The key is netfab.core.digest.inputs_digest over the intent files' bytes, every file of netfab itself (so
any rule, platform record, capability or template change, any netfab upgrade, misses), the added platform
records, the library versions, the options and paths as given (findings name files as the user did), and
each file's path as the loader read it, resolved: the findings of a split intent name the directory each
file came from, so a file moved to another directory of the same lint must miss.
The value is the findings and the skipped rule ids, as JSON. Nothing else is cached: the exit code is derived
from the findings on every hit, as lint derives it, so no entry can say "clean" beside an error.

An entry is an answer only when it is exactly what `store` writes (the keys, the types, the values lint
produces); anything else is a miss, and lint runs and rewrites it. The cache is trusted the way ssh trusts
~/.ssh: the directory (a symlink to one is fine when the link is the user's too) and every entry must be the
user's own and writable by no one else, and an entry must be a regular file of bounded size, opened without
following a link and without blocking (a FIFO, a link to /dev/zero). What fails that is neither read nor
written. None of this defends against the user's own edits: whoever may write the cache may answer for it.

Where: $NETFAB_CACHE_DIR, else $XDG_CACHE_HOME/netfab, else ~/.cache/netfab; `lint --no-cache` neither reads
nor writes it. A cache that cannot be read or written is no cache: lint runs as if it were absent and never
fails because of it. At most MAX_ENTRIES results are kept (oldest removed first).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import Finding, Location, Severity, Status, has_errors

FORMAT = 2  # 2: no exit code stored, each file's resolved path in the key
MAX_ENTRIES = 256
MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""What one entry may hold: far above any lint's findings, far below what reading it could cost."""
ENV_DIR = "NETFAB_CACHE_DIR"

_FINDING_KEYS = frozenset(
    ("rule_id", "severity", "message", "location", "hint", "path", "related", "status", "subject", "expected", "actual")
)
_ENTRY_KEYS = frozenset({"format", "findings", "skipped"})
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def cache_dir() -> Path:
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "netfab"


def lint_key(paths: Sequence[Path], read: Sequence[tuple[Path, bytes]], options: str) -> str:
    """The key of a lint of `paths` whose files held `read` (IntentSource.read_as_parsed: the bytes the lint
    parses, so a file saved meanwhile never files one text's findings under the other's key)."""
    from netfab.core.digest import contents_digest
    from netfab.platforms import ENV_PATH

    given = "\0".join(str(p) for p in paths)
    # contents_digest covers only each file's base name: d1/b.yaml moved to d2/ would read the same.
    files = "\0".join(f"{file}\0{os.path.realpath(file)}" for file, _ in read)
    return contents_digest(
        read, f"netfab-lint {FORMAT}\0{options}\0{given}\0files\0{files}", os.environ.get(ENV_PATH, "")
    )


def load(key: str, *, strict: bool) -> tuple[list[Finding], ExitCode, list[str]] | None:
    """The findings, exit code and skipped rule ids of the lint `key` names, or None (a miss)."""
    try:
        directory = _open_trusted_dir(create=False)
        if directory is None:
            return None
        try:
            data = _read_entry(directory, _entry_name(key))
        finally:
            os.close(directory)
        if data is None:
            return None
        entry = _parse(data)
    except OSError:
        return None
    if entry is None:
        return None
    findings, skipped = entry
    return findings, ExitCode.FINDINGS if has_errors(findings, strict) else ExitCode.OK, skipped


def store(key: str, findings: Sequence[Finding], skipped: Sequence[str]) -> None:
    """Best effort. Results `load` would not give back exactly (a value JSON cannot carry, a crashed rule's
    finding, more than MAX_ENTRY_BYTES) are not cached."""
    doc = {"format": FORMAT, "findings": [_encode(f) for f in findings], "skipped": list(skipped)}
    try:
        data = json.dumps(doc, sort_keys=True).encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return
    if len(data) > MAX_ENTRY_BYTES or _parse(data) != (list(findings), list(skipped)):
        return
    try:
        directory = _open_trusted_dir(create=True)
        if directory is None:
            return
        try:
            if _write_entry(directory, _entry_name(key), data):
                _prune(directory)
        finally:
            os.close(directory)
    except OSError:
        return


def _entry_name(key: str) -> str:
    return f"lint-{key}.json"


def _private(st: os.stat_result) -> bool:
    """The user's own and writable by no one else: what another local user could not have planted."""
    return st.st_uid == os.geteuid() and not st.st_mode & _OTHERS_WRITE


def _open_trusted_dir(*, create: bool) -> int | None:
    """A descriptor of the cache directory, or None when it is not private (_private). Entries are opened
    relative to it, so the directory checked is the directory read, whatever is renamed meanwhile."""
    path = cache_dir()
    if create:  # the last level private from the start, whatever the umask; its parents as mkdir -p makes them
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode) and link.st_uid != os.geteuid():
        return None  # a link another user placed may point at any directory of ours
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode) and _private(st):
        return fd
    os.close(fd)
    return None


def _read_entry(directory: int, name: str) -> bytes | None:
    # O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: opening a FIFO returns, and fstat refuses it.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=directory)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and _private(st)) or st.st_size > MAX_ENTRY_BYTES:
            return None
        data = file.read(MAX_ENTRY_BYTES + 1)  # the file may grow after fstat
    return None if len(data) > MAX_ENTRY_BYTES else data


def _write_entry(directory: int, name: str, data: bytes) -> bool:
    """Replace entry `name` atomically; False (nothing written) when what is there now is not ours to replace."""
    try:
        present = os.lstat(name, dir_fd=directory)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(present.st_mode) or not _private(present):
            return False
    tmp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        # Not fsynced: an entry a crash tore is not JSON, which is a miss.
        os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=directory)
        raise
    return True


def _prune(directory: int) -> None:
    with os.scandir(directory) as found:
        entries = sorted(
            (e.stat(follow_symlinks=False).st_mtime_ns, e.name)
            for e in found
            if e.name.startswith("lint-") and e.name.endswith(".json")
        )
    for _, old in entries[:-MAX_ENTRIES]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old, dir_fd=directory)


def _location(loc: Location) -> list[Any]:
    return [loc.file, loc.line, loc.column]


def _encode(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "severity": f.severity.value,
        "message": f.message,
        "location": _location(f.location),
        "hint": f.hint,
        "path": f.path,
        "related": [_location(r) for r in f.related],
        "status": f.status.value,
        "subject": f.subject,
        "expected": f.expected,
        "actual": f.actual,
    }


class _Malformed(ValueError):
    """An entry, or a part of one, that is not what `store` writes."""


def _parse(data: bytes) -> tuple[list[Finding], list[str]] | None:
    """(findings, skipped) of an entry's bytes when they are exactly a stored lint result, else None."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # not UTF-8 or JSON; nested deeper than the parser goes
        return None
    try:
        if type(doc) is not dict or doc.keys() != _ENTRY_KEYS:
            raise _Malformed("keys")
        if type(doc["format"]) is not int or doc["format"] != FORMAT:
            raise _Malformed("format")
        return [_decode(f) for f in _list(doc["findings"])], [_str(s) for s in _list(doc["skipped"])]
    except ValueError:  # _Malformed, or a severity no Severity names
        return None


def _decode(d: object) -> Finding:
    if type(d) is not dict or d.keys() != _FINDING_KEYS:
        raise _Malformed("finding keys")
    # Lint's findings all fail (a crashed rule's LINT-INTERNAL is an error and never stored) and carry no
    # expected/actual values: so the exit code derived from them is the one lint gave.
    if d["status"] != Status.FAIL.value or d["expected"] is not None or d["actual"] is not None:
        raise _Malformed("not a lint finding")
    return Finding(
        rule_id=_str(d["rule_id"]),
        severity=Severity(_str(d["severity"])),
        message=_str(d["message"]),
        location=_decode_location(d["location"]),
        hint=_str(d["hint"]),
        path=_str(d["path"]),
        related=tuple(_decode_location(r) for r in _list(d["related"])),
        subject=_str(d["subject"]),
    )


def _decode_location(v: object) -> Location:
    if type(v) is not list or len(v) != 3:
        raise _Malformed("location")
    return Location(_str(v[0]), _count(v[1]), _count(v[2]))


def _list(v: object) -> list[object]:
    if type(v) is not list:
        raise _Malformed("list")
    return v


def _str(v: object) -> str:
    if type(v) is not str:
        raise _Malformed("str")
    return v


def _count(v: object) -> int:
    if type(v) is not int or v < 0:  # not bool, which is an int to isinstance
        raise _Malformed("line or column")
    return v
