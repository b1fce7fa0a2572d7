"""Audit end-to-end tests: a lab of their own (unique prefix and management subnet), the CLI in a subprocess.

Skipped with the reason where the machine cannot run the lab (not root, no FRR, no sshd)."""

from __future__ import annotations

import ipaddress
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, RunningLab

HERE = Path(__file__).parent


def _unique() -> tuple[str, str]:
    # Not the deploy e2e tests' subnet: both labs may exist in one pytest process.
    pid = os.getpid()
    subnet = ipaddress.IPv4Network(f"172.{22 - (pid // 250) % 6}.{(pid * 7 + 11) % 250}.0/24")
    return f"a{pid % 100000}", str(subnet)


@pytest.fixture(scope="module")
def audit_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningLab]:
    prefix, subnet = _unique()
    work = tmp_path_factory.mktemp("audit-e2e")
    (work / "intent").mkdir()
    shutil.copy(ROOT / "intent" / "lab.yaml", work / "intent" / "lab.yaml")
    lab = RunningLab(prefix, subnet, work / "intent" / "lab.yaml", work)
    up = lab.netfab("lab", "up", str(lab.intent), "--prefix", prefix, "--mgmt-subnet", subnet)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield lab
    finally:
        down = lab.netfab("lab", "down", "--prefix", prefix)
        assert down.returncode == 0, down.stdout + down.stderr
