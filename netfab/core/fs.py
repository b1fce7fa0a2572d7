"""Writing files netfab produces: the one atomic write, and where each verb's output directory lives.

Atomic: the text goes to a temporary file beside the target, is flushed (and, when durable, fsynced with its
directory), then renamed over the target, so a reader (a CI uploader, a rollback reading a backup) sees the
old file or the new one, never half of one. Permissions are explicit (fchmod), not whatever mkstemp or the
umask would leave: reports are for others to read, journal backups may be narrower.

Every OSError leaves as OutputError, which names the path and says what to do; the CLI turns it into exit 2
(the environment is unusable, not a bug in netfab), wherever in a verb it is raised.

Output directories, one per verb and fabric, side by side under the output root, so no verb deletes another's:

    <root>/<fabric>/            netfab build (replaced whole, atomically, by every build and so every deploy)
    <root>/<fabric>.analysis/   netfab analyze
    <root>/<fabric>.audit/      netfab audit
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

DEFAULT_MODE = 0o644
VERB_DIRS = ("analysis", "audit")
"""The verbs that write a directory of their own beside the build (see verb_dir)."""


class OutputError(OSError):
    """A file or directory netfab must write cannot be written. `str()` is the whole message for an operator."""

    def __init__(self, path: Path, reason: str, hint: str, errno_: int | None = None) -> None:
        super().__init__(errno_ or 0, reason, str(path))
        self.path = path
        self.reason = reason
        self.hint = hint

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.reason} ({self.hint})"


_HINTS = {
    errno.EACCES: "no permission: choose a directory you can write, or fix its permissions",
    errno.EPERM: "no permission: choose a directory you can write, or fix its permissions",
    errno.EROFS: "the file system is read-only: choose another output directory",
    errno.ENOSPC: "the disk is full: free space or choose another output directory",
    errno.EDQUOT: "the disk quota is exhausted: free space or choose another output directory",
    errno.ENOTDIR: "a parent of this path is a file, not a directory: choose another path",
    errno.EISDIR: "this path is a directory: name a file instead",
    errno.ENAMETOOLONG: "the path is too long: choose a shorter one",
    errno.ELOOP: "too many symbolic links in the path: choose another path",
}


def output_error(path: Path, exc: OSError) -> OutputError:
    """Map an OSError from writing `path` to an OutputError with a hint an operator can act on."""
    if isinstance(exc, OutputError):
        return exc
    code = exc.errno or 0
    hint = _HINTS.get(code, "check the path and the disk, then re-run")
    return OutputError(path, exc.strerror or str(exc), hint, code)


def atomic_write_text(path: Path, text: str, *, mode: int = DEFAULT_MODE, durable: bool = True) -> None:
    """Replace `path` with `text` (UTF-8, line endings untouched) atomically, with permissions `mode`.

    durable: fsync the file and then its directory, so the new content survives a host crash or power loss,
    not only a killed process (one rename is enough for that). It costs two fsyncs (~3 ms each measured on a
    loaded lab VM), so re-derivable files on a hot path may pass durable=False.
    Missing parent directories are created. Raises OutputError.
    """
    data = text.encode("utf-8")
    # A name unique per process and thread, not mkstemp's random one: this is also the journal's hot path
    # (several files per device per wave), where mkstemp's retries and an mkdir per call cost 2-8x.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = _create(tmp)
    except OSError as exc:
        raise output_error(path, exc) from None
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise output_error(path, exc) from None
        raise
    if durable:
        fsync_dir(path.parent)


def _create(tmp: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        return os.open(tmp, flags, 0o600)
    except FileNotFoundError:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        return os.open(tmp, flags, 0o600)
    except FileExistsError:
        # Left by a killed process that had this pid (pid reuse) and this thread id: it is nobody's file now.
        tmp.unlink()
        return os.open(tmp, flags, 0o600)


def fsync_dir(directory: Path) -> None:
    # The rename lives in the directory; without this a crash can bring back the old name. Some file systems
    # refuse fsync on a directory (EINVAL): the file itself is already on disk, so that is not an error.
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    func: Callable[[int], int] | None = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    return func


def sync_filesystem(directory: Path) -> None:
    """Make every write finished so far on the filesystem holding `directory` durable: one syncfs(2) (Linux),
    sync(2) elsewhere. One call covers any number of files, data and renames alike (a group commit: N
    writers share one flush instead of two fsyncs each). Raises OSError when the flush reports an error."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        syncfs = _syncfs()
        if syncfs is None:
            os.sync()
        elif syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(directory))
    finally:
        os.close(fd)


def write_files(out_dir: Path, files: dict[str, str], *, mode: int = DEFAULT_MODE) -> list[Path]:
    """Write name -> text as plain files directly in out_dir, each atomically; the directory is not swapped
    (it may be a user's own, `--out .`). Names that are not plain file names are refused before anything is
    written. Raises OutputError."""
    for name in files:
        if not _is_plain_name(name):
            raise OutputError(out_dir / name, "not a plain file name", "this is a bug in netfab: report it")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(out_dir, exc) from None
    written = []
    for name, text in files.items():
        atomic_write_text(out_dir / name, text, mode=mode)
        written.append(out_dir / name)
    return written


def verb_dir(root: Path, fabric: str, verb: str) -> Path:
    """Where `verb` writes for `fabric`: <root>/<fabric>.<verb>/, a sibling of the build's <root>/<fabric>/.

    A build replaces <root>/<fabric>/ whole, so nothing another verb writes may live inside it. The fabric
    name is user data: it must be one plain path component (ValueError otherwise), so the directory stays
    directly under root."""
    if verb not in VERB_DIRS:
        raise ValueError(f"internal: no output directory convention for verb {verb!r}")
    if not _is_plain_name(fabric):
        raise ValueError(f"fabric name {fabric!r} cannot name a directory under {root}: use letters, digits, - and _")
    return root / f"{fabric}.{verb}"


def _is_plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name
