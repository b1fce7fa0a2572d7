"""Session-wide test policy: tests marked `lab` need root, FRR, sshd and ping; where any is missing they are
skipped with the exact reason (in CI, which runs as root with FRR installed, they run)."""

from __future__ import annotations

import shutil

import pytest


def lab_missing() -> list[str]:
    from netfab.lab import preflight

    missing = preflight()
    if shutil.which("ping") is None:
        missing.append("no `ping` (apt-get install iputils-ping)")
    return missing


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lab_items = [item for item in items if item.get_closest_marker("lab")]
    if not lab_items:
        return
    missing = lab_missing()
    if not missing:
        return
    skip = pytest.mark.skip(reason="needs a root machine with FRR: " + "; ".join(missing))
    for item in lab_items:
        item.add_marker(skip)
