"""The barrier experiment on a real lab: one throttled path sets every step's time while every link stays up and
error-free. Needs root and FRR (skipped with the reason otherwise)."""

from __future__ import annotations

import json
import statistics
import subprocess

import pytest

from tests.health.conftest import LAB_INTENT, HealthLab

pytestmark = pytest.mark.lab

MIB = 1 << 20
RATE = 25_000_000  # 1 MiB at 25 Mbit/s: 0.34 s, against a healthy step of a few ms


def _links(namespace: str) -> list[dict[str, object]]:
    out = subprocess.run(["ip", "-n", namespace, "-s", "-j", "link"], capture_output=True, text=True, check=True)
    return [link for link in json.loads(out.stdout) if str(link["ifname"]).startswith("swp")]


def test_one_throttled_path_sets_the_step_time_while_every_link_is_up_and_error_free(health_lab: HealthLab) -> None:
    from netfab.lab.state import load_state

    proc = health_lab.netfab(
        "lab", "collective", str(LAB_INTENT), "--lab", health_lab.prefix,
        "--bytes", "1MiB", "--steps", "6", "--throttle", "leaf3:swp2=25mbit", "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["steps"]) == 6 and len(data["workers"]) == 8
    expected = MIB * 8 / RATE
    baseline = data["summary"]["baseline_step_s"]
    for step in data["steps"]:
        assert {"step_time_s", "median_flow_s", "idle_fraction", "flows"} <= set(step)
        slowest = max(step["flows"], key=lambda f: f["seconds"])
        # The step is set by host4's rail-1 NIC behind leaf3 swp2, at the shaped rate: the flow it receives, or
        # the one it sends, whose acknowledgements queue behind that data (TCP here, not RDMA).
        assert "host4/eth0" in (slowest["dst"], slowest["src"])
        into = next(f for f in step["flows"] if f["dst"] == "host4/eth0")
        assert into["throttled"] == ["leaf3:swp2"] and into["seconds"] > 0.7 * expected
        assert 0.7 * expected < step["step_time_s"] < 1.6 * expected
        assert step["step_time_s"] > 3 * baseline and step["slow"]
        assert step["idle_fraction"] > 0.5  # the healthy workers spend most of the step waiting
    median_flows = statistics.median(f["seconds"] for s in data["steps"] for f in s["flows"])
    assert median_flows < expected / 5
    # Up and error-free, everywhere, after the run; and the run's shaping is gone again.
    state = load_state(health_lab.prefix)
    for rec in state.switches.values():
        for link in _links(rec.namespace):
            assert link["operstate"] == "UP", (rec.name, link["ifname"])
            stats = link["stats64"]
            assert isinstance(stats, dict)
            assert stats["rx"]["errors"] == stats["tx"]["errors"] == 0, (rec.name, link["ifname"])
        qdiscs = subprocess.run(["tc", "-n", rec.namespace, "-j", "qdisc"], capture_output=True, text=True).stdout
        assert "tbf" not in qdiscs, rec.name


def test_a_lab_that_is_not_up_is_a_usage_error(health_lab: HealthLab) -> None:
    proc = health_lab.netfab("lab", "collective", str(LAB_INTENT), "--lab", "zz9nope", "--bytes", "1k", "--steps", "1")
    assert proc.returncode == 2 and "is up" in proc.stdout + proc.stderr
