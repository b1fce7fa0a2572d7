"""Writing the analysis files: each one atomically (temp file + rename), and only inside the output directory.

The output directory may be a user's existing directory (`--out .`), so files are replaced one by one rather
than the directory being swapped. The default directory is build/<fabric>/analysis: the fabric name comes from
user data, so the resolved path is checked to stay under build/.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class UnsafeOutput(ValueError):
    pass


def default_out_dir(fabric: str, root: Path | None = None) -> Path:
    build = (root or Path.cwd()) / "build"
    out = build / fabric / "analysis"
    if not out.resolve().is_relative_to(build.resolve()) or fabric in ("", ".", "..") or "/" in fabric:
        raise UnsafeOutput(f"fabric name {fabric!r} would put the analysis outside build/")
    return out


def write_files(out_dir: Path, files: dict[str, str]) -> list[Path]:
    """Write name -> text under out_dir. Names are netfab's own constants; they are still checked."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = out_dir.resolve()
    # mkstemp creates 0600 files; reports are meant to be read by others, so apply the umask as open() would.
    umask = os.umask(0)
    os.umask(umask)
    written = []
    for name, text in files.items():
        path = (root / name).resolve()
        if path.parent != root:
            raise UnsafeOutput(f"refusing to write {name!r}: it would leave {out_dir}")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=root)
        try:
            os.fchmod(fd, 0o666 & ~umask)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(path)
    return written
