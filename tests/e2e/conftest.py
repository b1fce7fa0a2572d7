"""End-to-end tests: the CLI against a real lab (FRR in namespaces, real SSH). Need root and FRR."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class RunningLab:
    prefix: str
    subnet: str
    intent: Path
    work: Path

    def netfab(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", *args],
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"},
        )


def _unique(tag: str) -> tuple[str, str]:
    pid = os.getpid()
    prefix = f"e{pid % 10000}{tag}"
    subnet = ipaddress.IPv4Network(f"172.{30 - (pid // 250) % 8}.{(pid * 3) % 250}.0/24")
    return prefix, str(subnet)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningLab]:
    prefix, subnet = _unique("d")
    work = tmp_path_factory.mktemp("e2e")
    (work / "intent").mkdir()
    shutil.copy(ROOT / "intent" / "lab.yaml", work / "intent" / "lab.yaml")
    running = RunningLab(prefix, subnet, work / "intent" / "lab.yaml", work)
    up = running.netfab("lab", "up", str(running.intent), "--prefix", prefix, "--mgmt-subnet", subnet)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield running
    finally:
        down = running.netfab("lab", "down", "--prefix", prefix)
        assert down.returncode == 0, down.stdout + down.stderr
