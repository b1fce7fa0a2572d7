"""Lab tests need root, FRR and sshd: skip them with the exact reason when the machine lacks any of it."""

from __future__ import annotations

import ipaddress
import itertools
import os
from collections.abc import Callable

import pytest

from netfab.lab import LabSpec
from netfab.lab.sample import clos_spec

_serial = itertools.count()


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
