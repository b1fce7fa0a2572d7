"""Atomic, contained output trees.

A build writes everything into a fresh sibling directory and swaps it into place only when every file
rendered, so a failure (or Ctrl-C) never leaves a half-written build/<fabric>/ behind. Relative paths come
partly from user data (device names), so each one is checked to stay inside the output directory.

Swapping in replaces the old directory whole, so netfab only ever replaces a directory it wrote itself:
each tree carries a marker file, and a directory without one (say `--out ~`, or a fabric named like a
directory the user keeps notes in) is refused unless it is empty or holds only what netfab writes. The
directory itself must not be a symbolic link: replacing it would replace whatever the link points at.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Protocol

from netfab.core.fs import fsync_dir, output_error, sync_filesystem
from netfab.core.validate import InputError

MARKER = ".netfab-output"
"""Written into every tree netfab creates; its presence is what makes a directory safe to replace."""
# What netfab has always written into build/<fabric>/ and audit dirs: trees from before the marker existed
# are recognised by holding nothing else.
_LEGACY_ENTRIES = frozenset({"configs", "hosts", "inventory", "cabling.csv", "analysis", "devices"})
_LEGACY_FILES = ("report.json", "report.txt")


class UnsafePath(InputError):
    """A path netfab refuses to write (exit 2): it would leave, or wrongly replace, an output directory."""


def safe_relpath(relpath: str) -> PurePosixPath:
    """Reject absolute paths, '..', empty parts and backslashes before anything touches the disk."""
    p = PurePosixPath(relpath)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts) or "\\" in relpath:
        raise UnsafePath(f"refusing to write {relpath!r}: it would leave the output directory")
    return p


def relative_key(relpath: str) -> str:
    """str(safe_relpath(relpath)), without building a path object for the usual name (plain parts joined by
    single slashes, which is its own normal form): 19,000 names at 100k GPUs took 0.16-0.30 s as path objects,
    0.02-0.04 s like this."""
    if "\\" not in relpath and not relpath.startswith("/"):
        parts = relpath.split("/")
        if all(part not in ("", ".", "..") for part in parts):
            return relpath
    return str(safe_relpath(relpath))


class Companion(Protocol):
    """Work on an AtomicTree's surroundings that runs beside the build (netfab.render.preseed's child)."""

    def settle(self) -> None:
        """Wait for the companion to finish: the tree is about to be swapped in or removed."""


class AtomicTree:
    """Collects files in a staging directory next to `target`; commit() swaps it in."""

    def __init__(self, target: Path) -> None:
        self.target = self.target_of(target)
        check_replaceable(self.target)
        with _writing(self.target):
            self.target.parent.mkdir(parents=True, exist_ok=True)
            remove_abandoned(self.target)
            # The pid in the name tells a later build whether the process that made it still runs.
            prefix = f".{self.target.name}.tmp-{os.getpid()}-"
            self.staging = Path(tempfile.mkdtemp(prefix=prefix, dir=self.target.parent))
        with _writing(self.staging / MARKER):
            (self.staging / MARKER).write_text("written by netfab; this directory is replaced whole on the next run\n")
        self._dirs: set[Path] = set()
        self.companion: Companion | None = None
        """A process working beside the build on this tree (netfab.render.preseed), settled before the swap."""
        self.keep_replaced: Path | None = None
        """Where commit() moves the tree it replaces, instead of removing it (netfab.render.preseed), when that
        name is free; else the replaced tree is removed as usual."""

    @staticmethod
    def target_of(target: Path) -> Path:
        """The directory a tree for `target` replaces: its parent resolved (the parent may be a link, say a build
        root on another disk), the tree's own name never."""
        parent = target.parent.resolve()
        return parent / target.resolve().name if target.name in ("", ".", "..") else parent / target.name

    def write(self, relpath: str, text: str) -> None:
        rel = safe_relpath(relpath)
        path = self.staging.joinpath(*rel.parts)
        parent = path.parent
        with _writing(self.target / rel):
            if parent not in self._dirs:
                parent.mkdir(parents=True, exist_ok=True)
                self._dirs.add(parent)
            # A seeded staging tree shares inodes with the previous build (hard links): replace, never write through.
            path.unlink(missing_ok=True)
            # newline="" keeps templates' own line endings byte-identical across runs and platforms.
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)

    def seed_from_target(self) -> None:
        """Start from the current tree (hard links, so it is cheap) for a partial rebuild that must keep
        the files it does not regenerate."""
        if self.target.is_dir():
            shutil.rmtree(self.staging)
            # Links are not carried over: netfab never writes one, and writing through one would leave the tree.
            shutil.copytree(self.target, self.staging, copy_function=os.link, ignore=_symlinks)
            (self.staging / MARKER).touch()
            self._dirs.clear()

    def write_many(self, files: Iterable[tuple[str, str]]) -> None:
        for relpath, text in files:
            self.write(relpath, text)

    def commit(self) -> None:
        if self.companion is not None:
            self.companion.settle()
        check_replaceable(self.target)  # again: the directory may have changed while we rendered
        old: Path | None = None
        with _writing(self.target):
            # The swap must not reach the disk before the files it swaps in: after a power loss the tree would
            # be the new one with empty or torn files (ext4 orders data before a rename over a file, not before
            # a directory exchange). One syncfs covers every file the render workers wrote, at the cost of one
            # flush instead of one fsync per file.
            _sync_filesystem(self.staging)
            if self.target.exists():
                if _exchange(self.staging, self.target):
                    # One syscall swapped the two trees: at no instant is there no build/<fabric>/.
                    fsync_dir(self.target.parent)
                    self._dispose(self.staging)
                    return
                old = self.target.with_name(f".{self.target.name}.old-{os.getpid()}")
                os.replace(self.target, old)
            try:
                os.replace(self.staging, self.target)
            except BaseException:
                if old is not None:  # the old tree back in place: never no tree where there was one
                    with contextlib.suppress(OSError):
                        os.replace(old, self.target)
                raise
            fsync_dir(self.target.parent)
        if old is not None:
            self._dispose(old)

    def _dispose(self, replaced: Path) -> None:
        """The tree commit() replaced: kept under keep_replaced when that name is free, else removed."""
        # Only a free name: rename() would also replace an empty directory someone made there.
        if self.keep_replaced is not None and not os.path.lexists(self.keep_replaced):
            with contextlib.suppress(OSError):
                os.rename(replaced, self.keep_replaced)
                return
        shutil.rmtree(replaced, ignore_errors=True)

    def abort(self) -> None:
        if self.companion is not None:
            self.companion.settle()
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> AtomicTree:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                # A swap that failed (EIO, Ctrl-C): the staging tree is not left behind. Had the swap been made,
                # the staging name holds the replaced tree, which is what commit() disposes of anyway.
                self.abort()
                raise
        else:
            self.abort()


@contextlib.contextmanager
def writing_back(directory: Path, every_s: float = 0.5) -> Iterator[None]:
    """While the block runs, flush the filesystem holding `directory` every `every_s` seconds from a thread.

    AtomicTree.commit() must flush every file before the swap, and a large build leaves it a lot to flush: at
    100k GPUs, 230 MB of new files took commit()'s syncfs 1.3 s of wall after the render had ended, because
    nothing is written back before then (the kernel's background writeback starts at 10 % of memory dirty,
    2.4 GB on a 24 GiB machine). Flushed while the render workers run, the data goes to disk in time the build
    spends rendering anyway, and the thread waits on the disk, not on a core. These flushes only write back
    early: an error in one is not reported here (commit()'s own syncfs, which must succeed, reports it), and
    the durability argument rests on commit() alone. Start it after forking any workers: a process that forks
    while this thread runs is one Python 3.12 warns about."""
    stop = threading.Event()

    def flush() -> None:
        while not stop.wait(every_s):
            with contextlib.suppress(OSError):
                sync_filesystem(directory)

    # Joined below however the block ends, so a verb's fast exit (netfab.cli.teardown, which wants no thread
    # running) never waits for it and nothing outlives the tree it flushes.
    flusher = threading.Thread(target=flush, name="netfab-writeback")
    flusher.start()
    try:
        yield
    finally:
        stop.set()
        flusher.join()


def remove_abandoned(target: Path) -> None:
    """Remove the staging and replaced trees of `target` that a build killed outright left beside it (SIGKILL,
    a power loss: nothing of it ran to clean up). Only those named by a process that no longer runs, and only
    when they hold what netfab writes: a live build's trees, another user's, or a name netfab did not make
    are left alone. Each holds hard links to an old tree's files, so without this they pile up for ever. A
    replaced tree whose target is missing (a build killed between its two renames) is put back, not removed."""
    try:
        entries = sorted(os.listdir(target.parent))
    except OSError:
        return
    # A replaced tree first: killed between its two renames (no renameat2), a build left no tree at the target,
    # the old one under .<name>.old-<pid>; that one goes back in place rather than away.
    found = [(kind, pid, entry) for entry in entries for kind, pid in [_abandoned_by(entry, target.name)] if pid]
    found.sort(key=lambda item: item[0] != "replaced")
    for kind, pid, entry in found:
        if _running(pid):
            continue
        path = target.parent / entry
        if path.is_symlink() or not path.is_dir():
            continue
        with contextlib.suppress(OSError):
            names = set(os.listdir(path))
            if names and MARKER not in names and not _legacy_tree(path, names):
                continue
            if kind == "replaced" and names and not os.path.lexists(target):
                os.rename(path, target)
                continue
            shutil.rmtree(path, ignore_errors=True)


def _abandoned_by(entry: str, name: str) -> tuple[str, int | None]:
    """("staging", pid) for `.<name>.tmp-<pid>-<random>`, ("replaced", pid) for `.<name>.old-<pid>` (a tree being
    replaced where the kernel cannot swap two directories); ("", None) for any other name."""
    staging, replaced = f".{name}.tmp-", f".{name}.old-"
    if entry.startswith(staging):
        pid, dash, rest = entry[len(staging) :].partition("-")
        if pid.isdigit() and dash and rest:
            return "staging", int(pid)
    if entry.startswith(replaced) and entry[len(replaced) :].isdigit():
        return "replaced", int(entry[len(replaced) :])
    return "", None


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: running
    return True


def check_replaceable(target: Path) -> None:
    """Raise UnsafePath unless `target` is absent, empty, or a tree netfab wrote (see the module doc)."""
    hint = "move it away, or choose another output directory"
    if target.is_symlink():
        raise UnsafePath(f"{target} is a symbolic link; netfab will not replace what it points at", hint)
    if not target.exists():
        return
    if not target.is_dir():
        raise UnsafePath(f"{target} exists and is not a directory", hint)
    try:
        entries = {entry.name for entry in target.iterdir()}
    except OSError as exc:
        raise UnsafePath(f"cannot list {target}: {exc.strerror or exc}", "check its permissions") from None
    if MARKER in entries or not entries or _legacy_tree(target, entries):
        return
    raise UnsafePath(f"{target} is not a netfab output directory (no {MARKER}) and would be replaced whole", hint)


def _legacy_tree(target: Path, entries: set[str]) -> bool:
    known = _LEGACY_ENTRIES.union(_LEGACY_FILES)
    return entries <= known and not any((target / name).is_symlink() for name in entries)


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """A full disk or a read-only mount while writing the tree: OutputError (exit 2, path and hint), as for
    every other file netfab writes (netfab.core.fs)."""
    try:
        yield
    except OSError as exc:
        raise output_error(path, exc) from exc


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False where the kernel, libc or
    filesystem cannot, and the caller falls back to two renames."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _sync_filesystem(directory: Path) -> None:
    """Flush the filesystem holding `directory` (netfab.core.fs.sync_filesystem). Should syncfs(2) itself fail,
    sync(2) is the fallback, as before the flush was shared with the deploy journal."""
    try:
        sync_filesystem(directory)
    except OSError:
        os.sync()


def _symlinks(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if os.path.islink(os.path.join(directory, n))]
