"""Where package data lives, both in a source checkout and in an installed wheel.

The product layout keeps templates/ and playbooks/ at the repository top level; the wheel ships them
as netfab/_templates and netfab/_playbooks (see pyproject.toml). Capability data lives in the package.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _data_dir(package: str, checkout_dir: str) -> Path:
    try:
        candidate = Path(str(resources.files(package)))
        if candidate.is_dir():
            return candidate
    except ModuleNotFoundError:
        pass
    return _REPO_ROOT / checkout_dir


@cache
def templates_dir() -> Path:
    return _data_dir("netfab._templates", "templates")


@cache
def playbooks_dir() -> Path:
    return _data_dir("netfab._playbooks", "playbooks")


@cache
def capabilities_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "capabilities"
