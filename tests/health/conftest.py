"""Health tests: parsers on recordings anywhere; `lab` tests (a real FRR lab and the collective) need root and FRR
and are skipped with the reason otherwise (tests/conftest.py)."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB_INTENT = ROOT / "intent" / "lab.yaml"
RECORDINGS = Path(__file__).resolve().parent / "recordings"


@dataclass(frozen=True)
class HealthLab:
    prefix: str
    subnet: str

    def netfab(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"},
        )


def _unique() -> tuple[str, str]:
    """A prefix and a /24 of this test process alone, from 198.18.0.0/15 (RFC 2544's benchmarking range,
    which nothing on these machines routes; other lab tests use 172.16-31)."""
    from netfab.lab.netns import subnet_in_use

    pid = os.getpid()
    for k in range(64):
        n = pid + 41 * k
        subnet = ipaddress.IPv4Network(f"198.{18 + (n // 250) % 2}.{n % 250}.0/24")
        if not subnet_in_use(subnet):
            return f"h{pid % 10000}hl", str(subnet)
    raise RuntimeError("no free 198.18.0.0/15 management subnet")


@pytest.fixture(scope="module")
def health_lab() -> Iterator[HealthLab]:
    """The embedded lab intent (2 spines x 4 leaves, 4 hosts x 2 GPU NICs), up for one test module."""
    prefix, subnet = _unique()
    lab = HealthLab(prefix, subnet)
    up = lab.netfab("lab", "up", str(LAB_INTENT), "--lab", prefix, "--mgmt-subnet", subnet)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield lab
    finally:
        down = lab.netfab("lab", "down", "--lab", prefix)
        assert down.returncode == 0, down.stdout + down.stderr
