"""Atomic, contained output trees.

A build writes everything into a fresh sibling directory and swaps it into place only when every file
rendered, so a failure (or Ctrl-C) never leaves a half-written build/<fabric>/ behind. Relative paths come
partly from user data (device names), so each one is checked to stay inside the output directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath


class UnsafePath(ValueError):
    pass


def safe_relpath(relpath: str) -> PurePosixPath:
    """Reject absolute paths, '..', empty parts and backslashes before anything touches the disk."""
    p = PurePosixPath(relpath)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts) or "\\" in relpath:
        raise UnsafePath(f"refusing to write {relpath!r}: it would leave the output directory")
    return p


class AtomicTree:
    """Collects files in a staging directory next to `target`; commit() swaps it in."""

    def __init__(self, target: Path) -> None:
        self.target = target.resolve()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.tmp-", dir=self.target.parent))
        self._dirs: set[Path] = set()

    def write(self, relpath: str, text: str) -> None:
        rel = safe_relpath(relpath)
        path = self.staging.joinpath(*rel.parts)
        parent = path.parent
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
            shutil.copytree(self.target, self.staging, copy_function=os.link)
            self._dirs.clear()

    def write_many(self, files: Iterable[tuple[str, str]]) -> None:
        for relpath, text in files:
            self.write(relpath, text)

    def commit(self) -> None:
        old: Path | None = None
        if self.target.exists():
            old = self.target.with_name(f".{self.target.name}.old-{os.getpid()}")
            os.replace(self.target, old)
        os.replace(self.staging, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> AtomicTree:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
