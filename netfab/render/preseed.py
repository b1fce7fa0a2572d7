"""Seeding a rebuild's staging tree with the previous build's files while the plan is still being designed.

A rebuild swaps in a whole new tree (netfab.render.writer.AtomicTree), so every file it does not rewrite must be
hard-linked into the staging tree: at 100k GPUs 18,975 links and as many stats, ~0.45 s of kernel time that grew
with the fabric however small the change. None of it depends on the new plan, and while the parent process
loads, lints and designs (~1-1.6 s, one core) the machine's other core is idle. So a full rebuild forks a child
at its start that creates the staging tree and links into it every file the previous manifest lists that is
still on disk as recorded; the render then finds each unchanged file already in place (the writer's `seeded`
mode: it re-checks every file it keeps against the manifest and replaces, never writes through, the rest), and
what the new build does not produce is removed before the swap (`prune`).

The tree a seeded rebuild replaces is not removed after the swap either: removing its 19,000 entries took 0.2 s
of every rebuild, after the work was done. It is moved to `.<fabric>.previous` beside the tree instead, and
the next full rebuild's child removes it (see Preseed for when); a `.<fabric>.previous` netfab did not write
(no marker, or anything in the way of the name) is never removed nor replaced, and the replaced tree is
then removed as before.

Nothing here decides what a file holds: a seeded file is kept only when the render's own checks (its input
digest, its inode, size and mtime in the staging tree) say the previous build's bytes are this build's. A child
that fails, or a parent that stops first, leaves the build exactly as without seeding: the staging tree is
removed (Ctrl-C, an error) or, when the process is killed, left as any killed build leaves it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import stat
import sys
from pathlib import Path

from netfab.core.fs import OutputError
from netfab.render.manifest import MANIFEST, read_manifest
from netfab.render.writer import MARKER, AtomicTree, UnsafePath, relative_key

_PR_SET_PDEATHSIG = 1


class Preseed:
    """A staging tree being filled by a forked child (see the module doc). The child tells the parent through a
    pipe when the tree is seeded, then removes the tree an earlier rebuild kept, still while the parent designs
    (removing it after the render instead, once its files were created, measured 0.8 s slower: 4.26-4.89 s
    against 3.38-3.71 s for a change of 6,144 leaf configs at 100k GPUs). The parent waits for the child only
    before its own swap (`settle`), which may move the tree it replaces into the freed name."""

    def __init__(self, tree: AtomicTree, pid: int, seeded: int) -> None:
        self.tree = tree
        self._pid: int | None = pid
        self._seeded: int | None = seeded
        """The pipe's read end: one byte when the tree is seeded, end of file if the child failed first."""

    def take(self) -> AtomicTree | None:
        """The seeded staging tree, once it is seeded; None when the child failed (its tree is removed and the
        build starts an empty one, as without seeding)."""
        if self._seeded is None:
            return None
        with os.fdopen(self._seeded, "rb", buffering=0) as pipe:
            self._seeded = None
            seeded = pipe.read(1) == b"1"
        if not seeded:
            self.cancel()
            return None
        self.tree.companion = self
        return self.tree

    def settle(self) -> None:
        if self._pid is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = None

    def cancel(self) -> None:
        """Stop the child (if it still runs) and remove the staging tree: the build is not going ahead."""
        if self._seeded is not None:
            os.close(self._seeded)
            self._seeded = None
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
        self.settle()
        self.tree.abort()


def start(target: Path) -> Preseed | None:
    """Start seeding the staging tree of a full rebuild of `target`; None where there is nothing to seed (no
    previous tree), no fork, or anything in the way (the build then runs unseeded and reports what it meets).
    A tree netfab may not replace is left for the build to refuse with its error."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return None
    try:
        if target.is_symlink() or not (target / MANIFEST).is_file():
            return None
        tree = AtomicTree(target)
    except (UnsafePath, OutputError, OSError, ValueError):  # ValueError: a NUL in the name
        return None
    kept = tree.keep_replaced = previous_tree(tree.target)
    parent = os.getpid()
    fds: list[int] = []
    # Ctrl-C is held back across the fork, so the child can never take it before it has set it to kill itself
    # (a KeyboardInterrupt there would return the child into the caller, to build a second time).
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        fds.extend(os.pipe())
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for fd in fds:
            os.close(fd)
        tree.abort()
        return None
    read_end, write_end = fds
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child (then the mask lets it in)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.close(read_end)
            _die_with(parent)
            seed(tree.target, tree.staging)
            os.write(write_end, b"1")
            os.close(write_end)
            _remove_kept(kept)
            code = 0
        finally:
            os._exit(code)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(write_end)
    return Preseed(tree, pid, read_end)


def previous_tree(target: Path) -> Path:
    """Where a seeded rebuild of `target` keeps the tree it replaced: `.<fabric>.previous` beside it."""
    return target.with_name(f".{target.name}.previous")


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_kept(kept: Path) -> None:
    """Remove the tree an earlier rebuild kept, when it is one: a directory (not a link) holding netfab's marker,
    which nothing but a build wrote there (no older netfab kept trees, so no tree without it is one). Everything
    is removed through descriptors opened without following links, and the marker goes last, so a removal cut
    short (the build stopped) leaves a tree the next rebuild still knows as netfab's and removes."""
    try:
        top = os.open(kept, _DIR_FLAGS)
    except OSError:
        return  # absent, a link, or not a directory: not ours
    try:
        if not stat.S_ISREG(os.stat(MARKER, dir_fd=top, follow_symlinks=False).st_mode):
            return
        for entry in os.scandir(top):
            if entry.name == MARKER:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.name, dir_fd=top, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.name, dir_fd=top)
        os.unlink(MARKER, dir_fd=top)
    except OSError:
        return
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(kept)


def seed(previous: Path, staging: Path) -> int:
    """Hard-link into `staging` every regular file of the tree `previous` that its manifest lists and that is
    still as the manifest recorded it (inode, size, mtime); returns how many. Every directory on the way is
    opened without following links, so neither a name that would leave the tree nor a link (to a file or to a
    directory) is ever followed."""
    manifest = read_manifest(previous)
    if manifest is None:
        return 0
    dirs = {"": os.open(previous, _DIR_FLAGS)}
    made = {""}
    linked = 0
    try:
        for rel, record in manifest.files.items():
            try:
                key = relative_key(rel)
            except UnsafePath:
                continue
            if key in (MARKER, MANIFEST):
                continue
            parent, _, name = key.rpartition("/")
            try:
                where = _open_beneath(dirs, parent)
                st = os.stat(name, dir_fd=where, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or not record.matches(st):
                continue
            if parent not in made:
                os.makedirs(f"{staging}/{parent}", exist_ok=True)
                made.add(parent)
            os.link(name, f"{staging}/{key}", src_dir_fd=where, follow_symlinks=False)
            linked += 1
    finally:
        for fd in dirs.values():
            os.close(fd)
    return linked


def _open_beneath(dirs: dict[str, int], rel: str) -> int:
    """A descriptor of directory `rel` of the tree whose root is dirs[""], each part opened from the one above
    without following a link (memoised in `dirs`, which the caller closes)."""
    fd = dirs.get(rel)
    if fd is None:
        above, _, name = rel.rpartition("/")
        fd = dirs[rel] = os.open(name, _DIR_FLAGS, dir_fd=_open_beneath(dirs, above))
    return fd


def prune(staging: Path, keep: set[str]) -> None:
    """Remove from a seeded staging tree every file this build did not produce (a device no longer in the plan),
    and the directories that leaves empty, so the tree swapped in holds exactly this build's files."""
    keep = keep | {MARKER, MANIFEST}
    root = str(staging)
    for here, _, files in os.walk(root, topdown=False):
        rel = os.path.relpath(here, root)
        prefix = "" if rel == "." else rel + "/"
        for name in files:
            if prefix + name not in keep:
                os.unlink(f"{here}/{name}")
        # configs/, hosts/ and inventory/ stay even when empty, as an unseeded build makes them.
        if "/" in rel:
            with contextlib.suppress(OSError):  # not empty: it holds files of this build
                os.rmdir(here)


def _die_with(parent: int) -> None:
    """In the child: end with the parent (a killed build leaves no seeder running)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent ended before the line above took effect
        os._exit(1)
