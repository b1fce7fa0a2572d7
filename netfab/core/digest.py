"""Content digests of what netfab's output is a function of, for caches that must never serve a stale answer.

`inputs_digest` covers the intent files' bytes, netfab's own code and data (every file of the package: rules,
platform records, capabilities, templates shipped inside it), the shared templates/ folder, the platform
records added through NETFAB_PLATFORMS_PATH, and the versions of Python, Jinja2, PyYAML and pydantic. Reading the
package's ~2 MB costs a few milliseconds; a change anywhere in it changes every digest, which is the point.
"""

from __future__ import annotations

import hashlib
import os
import platform as py_platform
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from netfab.core.paths import templates_dir

_PACKAGE = Path(__file__).resolve().parents[1]
# Compiled bytecode and editor droppings are not inputs; everything else in the package may be (data files).
_SKIP_SUFFIXES = (".pyc", ".pyo", ".swp", "~")


def _tree_files(root: Path) -> Iterable[Path]:
    # Into linked folders too: the platform registry and the template loader read through them, so a record
    # kept in a linked folder is as much an input as one copied in. A link back to a folder above it is not
    # walked again (that would never end) but named, so adding or removing one still changes the digest.
    top = _identity(root)
    above: dict[str, frozenset[tuple[int, int] | None]] = {str(root): frozenset({top})}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        here = above.pop(dirpath)
        walked = []
        for name in sorted(d for d in dirnames if d != "__pycache__"):
            child = _identity(Path(dirpath) / name)
            if child is None or child in here:
                yield Path(dirpath) / name  # read as a folder: its marker (netfab.core.digest._contents)
                continue
            above[os.path.join(dirpath, name)] = here | {child}
            walked.append(name)
        dirnames[:] = walked
        for name in sorted(filenames):
            if not name.endswith(_SKIP_SUFFIXES):
                yield Path(dirpath) / name


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(folder)
    except OSError:  # gone since it was listed: named with its marker, like any folder not walked
        return None
    return st.st_dev, st.st_ino


def _add_tree(h: hashlib.blake2b, label: str, root: Path) -> None:
    h.update(f"\0tree {label}\0".encode())
    if not root.is_dir():
        return
    for path in _tree_files(root):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(_contents(path))
        h.update(b"\0")


def _contents(path: Path) -> bytes:
    """A file's bytes; for one netfab cannot read (a dangling link such as an editor's lock file, no
    permission), a marker of why instead of a crash: nothing that renders can read it either, and the digest
    still changes when it becomes readable."""
    try:
        return b"F" + path.read_bytes()
    except OSError as exc:
        target = os.readlink(path) if path.is_symlink() else ""
        return f"U{exc.errno} {target}".encode()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def code_digest(platforms_path: str = "") -> str:
    """One digest over everything in the module doc but the intent: what turns a plan into files (netfab's code
    and data, the templates, the added platform records, the library versions). `platforms_path` is
    NETFAB_PLATFORMS_PATH's value (os.pathsep-separated record folders)."""
    h = hashlib.blake2b(digest_size=20)
    # pydantic validates the intent: another release may give another model of the same bytes.
    h.update(
        f"python {py_platform.python_version()} jinja2 {_version('jinja2')} pyyaml {_version('PyYAML')} "
        f"pydantic {_version('pydantic')}".encode()
    )
    _add_tree(h, "netfab", _PACKAGE)
    _add_tree(h, "templates", templates_dir())
    for i, extra in enumerate(p for p in platforms_path.split(os.pathsep) if p):
        _add_tree(h, f"platforms-path {i}", Path(extra))
    return h.hexdigest()


def inputs_digest(intent_files: Iterable[Path], options: str, platforms_path: str = "", code: str = "") -> str:
    """One digest over `options` (what the caller's answer also depends on), the intent files' bytes and
    code_digest(platforms_path) (`code`, when the caller has it already)."""
    return contents_digest(((p, p.read_bytes()) for p in intent_files), options, platforms_path, code)


def contents_digest(
    intent: Iterable[tuple[Path, bytes]], options: str, platforms_path: str = "", code: str = ""
) -> str:
    """inputs_digest over the intent files' bytes as given (those a parse read: IntentSource.read_as_parsed)."""
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{options}\0".encode())
    for path, data in intent:
        h.update(f"\0intent {path.name}\0".encode())
        h.update(data)
    h.update(f"\0code {code or code_digest(platforms_path)}".encode())
    return h.hexdigest()
