"""Lab check tests: `lab` tests need root and FRR (real namespaces, real traffic); skipped with the reason
otherwise. The unmarked tests run anywhere against a simulated lab."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from labcheck_helpers import LAB_INTENT, RunningLab, unique_lab

from netfab.lab.netns import namespaces_with_prefix, root_links_with_prefix


@pytest.fixture(scope="module")
def running_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningLab]:
    prefix, subnet = unique_lab()
    work = tmp_path_factory.mktemp("analyze-lab")
    (work / "intent").mkdir()
    shutil.copy(LAB_INTENT, work / "intent" / "lab.yaml")
    running = RunningLab(prefix, subnet, work / "intent" / "lab.yaml", work)
    up = running.netfab("lab", "up", str(running.intent), "--prefix", prefix, "--mgmt-subnet", subnet)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield running
    finally:
        down = running.netfab("lab", "down", "--prefix", prefix)
        assert down.returncode == 0, down.stdout + down.stderr
        # Teardown is part of what is tested: nothing of this lab may be left on the machine.
        assert namespaces_with_prefix(prefix) == []
        assert root_links_with_prefix(prefix) == []
