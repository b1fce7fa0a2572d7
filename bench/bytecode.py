"""Measure netfab as it is installed: with its modules compiled to bytecode.

`pip install` compiles every module it installs, and Python writes the bytecode of a checkout on first import,
unless PYTHONDONTWRITEBYTECODE is set. The shells these benches were first run from set it, so every netfab
module without a .pyc was compiled again in every measured process: 0.45 s of the 0.8 s that `netfab lint`
of the 100k example takes (measured: 1.22-1.26 s with none compiled, 0.79-0.82 s with all). Which modules had
one depended on what had run before, so the figures moved with the history of the tree. The benches compile
the package once before they measure, and run netfab without the variable, so no run compiles anything.
"""

from __future__ import annotations

import compileall
import os
from functools import cache
from pathlib import Path


@cache
def compiled(checkout: Path) -> None:
    """Write the bytecode of `checkout`'s netfab package next to its sources (what a first import would)."""
    package = checkout / "netfab"
    if not compileall.compile_dir(package, quiet=1, workers=0):
        raise SystemExit(f"bench: could not compile {package} (a syntax error, or the tree is not writable)")


def measured_env(checkout: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) for a measured netfab process of `checkout`: the package compiled, and
    PYTHONDONTWRITEBYTECODE dropped so that a module left out (a new file) is compiled once, not every run."""
    compiled(checkout)
    out = dict(os.environ if env is None else env)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out
