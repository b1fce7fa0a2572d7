"""The build manifest: what a build tree was made from, and a digest of every file in it.

`build/<fabric>/.netfab-build.json` records

- ``inputs``: one digest over everything the tree is a function of: the intent files' bytes, netfab's own code
  and data (every file of the package, which holds the platform records, capabilities and their templates),
  the shared templates/ folder, the platform records added through NETFAB_PLATFORMS_PATH, the versions of
  Python, Jinja2, PyYAML and pydantic (their output is part of the files; pydantic's validation makes the
  model that is designed), and the build's options. Only a full build
  records it (a ``--platform``/``--limit`` build records ``null``: its tree is not a function of one input);
- ``files``: per file, the digest of its bytes (digest_bytes), its size, the mtime and inode it had when netfab
  wrote it, and for a switch config or a server's NIC script the digest of what it was rendered from
  (netfab.render.inputs: the template context, the platform record, netfab's code and templates).

A rebuild whose inputs digest matches, over a tree whose every file still has the size, mtime and inode the
manifest recorded (a hand edit, a deleted file or a replaced one changes them), writes nothing and renders
nothing. Any other rebuild renders only the switches and servers whose input digest differs from the one
recorded with their files (or whose files are not on disk as recorded), and rewrites only the files whose bytes
changed; every other file is a hard link to the previous tree's inode, so the new tree is still swapped in whole.
Nothing outside the tree is cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netfab.core import digest

MANIFEST = ".netfab-build.json"
FORMAT = 2
"""2: file digests are SHA-256 (was BLAKE2b): a format-1 manifest is not read, so its digests are never compared
with this format's."""


@dataclass(frozen=True, slots=True)
class FileRecord:
    digest: str
    size: int
    mtime_ns: int
    inode: int
    inputs: str | None = None
    """The digest of what the file was rendered from (netfab.render.inputs), when it has one."""

    def __reduce__(self) -> tuple[type[FileRecord], tuple[str, int, int, int, str | None]]:
        # A slotted dataclass pickles through __getstate__/__setstate__ calls per record; the render workers send
        # ~19,000 back at 100k GPUs (pickle and unpickle of 19,000: 0.135 s measured, 0.083 s like this).
        return FileRecord, (self.digest, self.size, self.mtime_ns, self.inode, self.inputs)

    def matches(self, st: os.stat_result) -> bool:
        """The file on disk is still the one netfab wrote (same inode, size and mtime)."""
        return st.st_ino == self.inode and st.st_size == self.size and st.st_mtime_ns == self.mtime_ns


@dataclass(slots=True)
class Manifest:
    inputs: str | None
    files: dict[str, FileRecord] = field(default_factory=dict)
    model: str | None = None
    """The digest of what the tree's network was designed from once the intent is validated (model_digest), so
    an edit that changes the intent's bytes but not what it says (a comment, an order, a default written out
    changes it) is known without a design; only a full build records it."""

    def to_json(self) -> str:
        files = {rel: _row(r) for rel, r in sorted(self.files.items())}
        head: dict[str, object] = {"format": FORMAT, "inputs": self.inputs}
        if self.model is not None:
            head["model"] = self.model
        return json.dumps({**head, "files": files}, separators=(",", ":")) + "\n"

    def intact(self, root: Path) -> bool:
        """Every recorded file is on disk as written (one stat each; nothing is read).

        Each stat is relative to one open descriptor of the tree, not a joined Path: at 19,000 files the Path
        joins were 3/4 of a no-op rebuild's check (0.31 -> 0.08 s on a 100k-GPU tree)."""
        try:
            tree = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return False
        try:
            return self.intact_at(tree)
        finally:
            os.close(tree)

    def intact_at(self, tree: int) -> bool:
        """`intact` for the tree open as the directory descriptor `tree`."""
        for rel, record in self.files.items():
            try:
                st = os.stat(rel, dir_fd=tree, follow_symlinks=False)
            except OSError:
                return False
            if not record.matches(st):
                return False
        return True


def read_manifest(root: Path) -> Manifest | None:
    """The tree's manifest, or None when it has none or it cannot be trusted (then everything is rewritten)."""
    text = _manifest_bytes(str(root / MANIFEST))
    return None if text is None else _parse(text)


MAX_BYTES = 1 << 30
"""A manifest larger than this is not read (a rebuild): ~2 MB at 100k GPUs, so this is ~50 million files."""

_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""Never through a link (it could name /dev/zero), never waiting on a FIFO put in its place."""


def _manifest_bytes(path: str, tree: int | None = None, limit: int | None = None) -> bytes | None:
    """The bytes of the manifest at `path` (relative to the directory descriptor `tree` when given; at most
    `limit` of them), or None unless it is a regular file of at most MAX_BYTES: anything else in its place (a
    FIFO, a device, a directory, a link) is not a manifest netfab wrote, and the build then rewrites the tree."""
    try:
        fd = os.open(path, _OPEN, dir_fd=tree)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        want = st.st_size if limit is None else min(limit, st.st_size)
        chunks: list[bytes] = []
        got = 0
        while got < want:  # a file that grows meanwhile is read only to the size it had
            chunk = os.pread(fd, want - got, got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse(text: bytes) -> Manifest | None:
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            return None
        files = {rel: _record(v) for rel, v in data["files"].items()}
        inputs, model = data.get("inputs"), data.get("model")
        return Manifest(inputs if isinstance(inputs, str) else None, files, model if isinstance(model, str) else None)
    # OverflowError: a size of 1e400 or Infinity; RecursionError: JSON nested deeper than the parser goes.
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, RecursionError):
        return None


def _row(r: FileRecord) -> list[object]:
    # A file without an input digest keeps the four-field row, which older netfab reads the same way.
    row: list[object] = [r.digest, r.size, r.mtime_ns, r.inode]
    return row if r.inputs is None else [*row, r.inputs]


def _record(v: Any) -> FileRecord:
    inputs = v[4] if len(v) > 4 else None
    return FileRecord(str(v[0]), int(v[1]), int(v[2]), int(v[3]), inputs if isinstance(inputs, str) else None)


def digest_bytes(data: bytes) -> str:
    """A file's content digest. SHA-256, cut to 128 bits: with the CPU's SHA extensions it is ~2.2x BLAKE2b's
    speed (279 MB of 100k-GPU output: 0.22 s against 0.49 s measured), and nothing here needs more bits."""
    return hashlib.sha256(data).hexdigest()[:32]


def inputs_digest(intent_files: Iterable[Path], options: str) -> str:
    """The build's inputs digest (netfab.core.digest: intent bytes, netfab's code and data, templates, added
    platform records, library versions), under this manifest format, over the files as they are now (a build
    digests the bytes it parsed: source_digest)."""
    from netfab.platforms import ENV_PATH

    return digest.inputs_digest(intent_files, f"netfab-build {FORMAT}\0{options}", os.environ.get(ENV_PATH, ""))


def source_digest(intent: list[tuple[Path, bytes]], options: str, code: str) -> str:
    """inputs_digest over the intent files' bytes as a parse read them (IntentSource.read_as_parsed)."""
    from netfab.platforms import ENV_PATH

    return digest.contents_digest(intent, f"netfab-build {FORMAT}\0{options}", os.environ.get(ENV_PATH, ""), code)


def code_digest() -> str:
    """netfab.core.digest.code_digest with the added platform records of this process's environment."""
    from netfab.platforms import ENV_PATH

    return digest.code_digest(os.environ.get(ENV_PATH, ""))


def built_tree(out_root: Path, plan_name: str) -> tuple[Path, Manifest] | None:
    """out_root/<fabric>/ and its manifest, when that is a build tree (a symlinked one is refused, as the build
    refuses to replace one)."""
    from netfab.render.writer import UnsafePath, safe_relpath

    try:
        target = out_root / safe_relpath(plan_name).name
    except UnsafePath:
        return None
    if target.is_symlink() or not target.is_dir():
        return None
    manifest = read_manifest(target)
    return None if manifest is None else (target, manifest)


def model_digest(intent: object, network: str, options: str, code: str) -> str | None:
    """The digest recorded as Manifest.model: the validated intent as a whole (every network is designed from
    the root intent), the network the tree is of, the build's options and netfab's code (code_digest), under this
    manifest format; None when the intent holds a value with no canonical form (then no build records one)."""
    from netfab.core.digest_canonical import CanonicalDigest, NotCanonical

    try:
        return CanonicalDigest().digest(f"netfab-model {FORMAT}", options, network, code, intent)
    except NotCanonical:
        return None


class SameModel:
    """A built tree, held open, whose manifest records `model` and every file of which is still as written:
    the same validated intent and the same netfab, so a design and a render would give this very tree.
    `restamp` then records the new inputs digest, writing nothing else. Held by descriptor from the check to
    the restamp, so a tree another build swaps in meanwhile is never stamped with these inputs (the stamp
    lands in the tree that was checked, wherever it went)."""

    def __init__(self, fd: int, manifest: Manifest) -> None:
        self._fd = fd
        self.manifest = manifest

    @classmethod
    def check(cls, out_root: Path, plan_name: str, model: str) -> SameModel | None:
        from netfab.render.writer import UnsafePath, safe_relpath

        try:
            target = out_root / safe_relpath(plan_name).name
            fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (UnsafePath, OSError):
            return None
        try:
            head = _head_at(fd)
            if head is not None and (head[0] is None or head[1] != model):
                os.close(fd)
                return None  # not this model: the 2 MB of file records need not be parsed to know
            manifest = manifest_at(fd)
            if (
                manifest is not None
                and manifest.inputs is not None
                and manifest.model == model
                and manifest.intact_at(fd)
            ):
                return cls(fd, manifest)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return None

    def restamp(self, inputs: str) -> None:
        """Replace the manifest by the same one naming `inputs`: a new file renamed over it, both flushed."""
        self.manifest.inputs = inputs
        data = self.manifest.to_json().encode("utf-8")
        temp = f"{MANIFEST}.{os.getpid()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(temp, flags, 0o666, dir_fd=self._fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                os.fsync(out)
            finally:
                os.close(out)
            os.replace(temp, MANIFEST, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except BaseException:
            # A full disk, an interrupt: the old manifest stays, and no half-written one is left beside it.
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self._fd)
            raise
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a directory (netfab.core.fs)
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


_HEAD = re.compile(rb'\{"format":(\d+),"inputs":(?:null|"([0-9a-f]+)")(?:,"model":"([0-9a-f]+)")?,"files":')
"""The head of a manifest as Manifest.to_json writes it: format, inputs, model, then the file records."""


def _head_at(tree: int) -> tuple[str | None, str | None] | None:
    """(inputs, model) as the head of the tree's manifest states them, read without parsing its file records;
    None when there is no head of that form (then only a full parse tells). A check that fails on the head is
    a rebuild, which is always safe; one that passes on it is made again on the full parse."""
    head = _manifest_bytes(MANIFEST, tree, limit=256)
    found = None if head is None else _HEAD.match(head)
    if found is None or int(found.group(1)) != FORMAT:
        return None
    inputs, model = found.group(2), found.group(3)
    return (None if inputs is None else inputs.decode()), (None if model is None else model.decode())


def manifest_at(tree: int) -> Manifest | None:
    """read_manifest for the tree open as the directory descriptor `tree`."""
    text = _manifest_bytes(MANIFEST, tree)
    return None if text is None else _parse(text)


def up_to_date(plan_name: str, out_root: Path, inputs: str) -> Manifest | None:
    """The manifest of out_root/<fabric>/ when that tree was built from exactly `inputs` and every file in it is
    still as written, i.e. a build would write the same bytes: then nothing needs rendering or writing."""
    from netfab.render.writer import UnsafePath, safe_relpath

    try:
        fd = os.open(out_root / safe_relpath(plan_name).name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (UnsafePath, OSError):
        return None
    try:
        head = _head_at(fd)
    finally:
        os.close(fd)
    if head is not None and head[0] != inputs:
        return None  # other inputs, told by the head alone (a rebuild's usual case)
    tree = built_tree(out_root, plan_name)
    if tree is None:
        return None
    target, manifest = tree
    return manifest if manifest.inputs == inputs and manifest.intact(target) else None
