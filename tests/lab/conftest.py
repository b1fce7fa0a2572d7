"""Lab tests need root, FRR and sshd: skip them with the exact reason when the machine lacks any of it."""

from __future__ import annotations

import ipaddress
import itertools
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from netfab.lab import LabSpec, preflight
from netfab.lab.sample import clos_spec

_serial = itertools.count()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = preflight()
    if shutil.which("ping") is None:
        missing.append("no `ping` (apt-get install iputils-ping)")
    if not missing:
        return
    skip = pytest.mark.skip(reason="lab test needs a root machine with FRR: " + "; ".join(missing))
    here = Path(__file__).parent
    for item in items:
        # This conftest sees the whole session's items: touch only this directory's lab tests.
        if item.get_closest_marker("lab") and here in item.path.parents:
            item.add_marker(skip)


def unique_lab(tag: str) -> tuple[str, str]:
    """A prefix and management subnet no other test run on this machine uses (derived from the pid)."""
    n = next(_serial)
    pid = os.getpid()
    prefix = f"t{pid % 10000}{tag}{n % 100}"
    # 172.20-29.x.0/24: clear of LAB.md's 172.31.255.0/24 and of the fabric's 10/8.
    subnet = ipaddress.IPv4Network(f"172.{20 + (pid // 250) % 10}.{(pid + 7 * n) % 250}.0/24")
    return prefix, str(subnet)


@pytest.fixture(scope="session")
def lab_names() -> Callable[[str], tuple[str, str]]:
    """unique_lab as a fixture, for module-scoped labs."""
    return unique_lab


@pytest.fixture
def make_spec() -> Callable[..., LabSpec]:
    """A 2-tier Clos spec (default 2 spines x 4 leaves x 2 hosts) with a fresh prefix and subnet."""

    def make(spines: int = 2, leaves: int = 4, hosts_per_leaf: int = 2, tag: str = "x") -> LabSpec:
        prefix, subnet = unique_lab(tag)
        return clos_spec(prefix, spines, leaves, hosts_per_leaf, mgmt_subnet=subnet)

    return make
