"""Shared by the lab check tests: the lab's plan, a running lab handle, a unique prefix and subnet."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import yaml

from netfab.design import design
from netfab.design.plan import FabricPlan
from netfab.intent import Intent
from netfab.lab.fromplan import lab_intent
from netfab.lab.netns import subnet_in_use
from tests.e2e.conftest import RunningLab

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["LAB_INTENT", "RunningLab", "lab_plan", "unique_lab"]
LAB_INTENT = ROOT / "intent" / "lab.yaml"


def lab_plan() -> FabricPlan:
    """The plan `netfab lab up intent/lab.yaml` runs: the lab variant of the intent."""
    intent = Intent.model_validate(yaml.safe_load(LAB_INTENT.read_text()))
    return design(lab_intent(intent))


def unique_lab() -> tuple[str, str]:
    """A prefix and management subnet of this test run alone: the pid, and a /24 nobody on the machine uses
    (172.16-19.x: clear of tests/lab's 172.20-29, e2e's 172.23-30 and LAB.md's 172.31.255)."""
    pid = os.getpid()
    prefix = f"a{pid % 10000}lc"
    for k in range(64):
        n = pid + 37 * k
        subnet = ipaddress.IPv4Network(f"172.{16 + (n // 250) % 4}.{n % 250}.0/24")
        if not subnet_in_use(subnet):
            return prefix, str(subnet)
    raise RuntimeError("no free 172.16-19.x/24 management subnet")
