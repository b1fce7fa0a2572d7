"""Where the analysis goes by default: build/<fabric>.analysis/, beside the build (core.fs.verb_dir).

Inside build/<fabric>/ it would be deleted by the next `netfab build`, which replaces that tree whole.
The files themselves are written by core.fs.write_files (each atomically, only directly in the directory).
"""

from __future__ import annotations

from pathlib import Path

from netfab.core.fs import verb_dir


class UnsafeOutput(ValueError):
    pass


def default_out_dir(fabric: str, root: Path | None = None) -> Path:
    try:
        return verb_dir((root or Path.cwd()) / "build", fabric, "analysis")
    except ValueError as exc:
        raise UnsafeOutput(str(exc)) from None
