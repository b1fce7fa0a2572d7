"""Where package data lives, both in a source checkout and in an installed wheel.

The product layout keeps templates/ and playbooks/ at the repository top level; the wheel ships them
as netfab/_templates and netfab/_playbooks (see pyproject.toml). Platform records live in the package
(netfab/platforms/<name>/platform.yaml).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
_REPO_ROOT = _PACKAGE.parent


def _data_dir(installed: str, checkout_dir: str) -> Path:
    # Plain directory checks, not importlib.resources: the data dirs have no __init__.py, so resources hands
    # back a namespace MultiplexedPath that is not a filesystem path.
    candidate = _PACKAGE / installed
    return candidate if candidate.is_dir() else _REPO_ROOT / checkout_dir


@cache
def templates_dir() -> Path:
    return _data_dir("_templates", "templates")


@cache
def playbooks_dir() -> Path:
    return _data_dir("_playbooks", "playbooks")
