"""Failure-domain analysis (issue 15 point 1): what one failure does to a job, from the plan alone.

small-clos3.yaml is built so the figures can be checked by hand: 2 pods x 2 racks x 2 servers x 8 GPUs at
400G, rack switches 16 down / 4 up to 4 pod spines, each spine one uplink to each of 2 superspines. In a
64-GPU rail-aligned all-to-all every NIC sends to 7 peers, 6 of them off its rack, so each rack switch puts
16 x 6 = 96 flows on 4 uplinks (24 each): the uplinks, not the NICs (7 flows), set the step time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from netfab.analyze.collective import gpu_pairs, place_job
from netfab.analyze.failure import FailureModel, FailureSpecError, failure_findings
from netfab.analyze.flows import flow_set
from netfab.analyze.routing import build_routes
from netfab.cli.pipeline import load_plan
from netfab.core.findings import Status

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).parent / "failure_fixtures" / "small-clos3.yaml"


@cache
def model(intent: Path, pattern: str, gpus: int, placement: str = "packed") -> FailureModel:
    loaded = load_plan([intent], strict=False)
    routes = build_routes(loaded.plan, loaded.intent.topology.servers.gpus_per_server)
    job = place_job(routes, gpus, placement, 1)  # type: ignore[arg-type]
    return FailureModel(loaded.plan, routes, flow_set(routes, gpu_pairs(job, pattern)))  # type: ignore[arg-type]


def small() -> FailureModel:
    return model(SMALL, "alltoall", 64)


def test_the_intact_fabric_is_bound_by_the_rack_uplinks() -> None:
    util, link = small().before
    assert util == pytest.approx(24 / 400) and "-> pod1-spine" in link


@pytest.mark.parametrize(
    ("element", "factor"),
    [
        ("pod1-leaf1:swp17", 4 / 3),  # 96 flows on 3 uplinks instead of 4
        ("pod1-spine1", 4 / 3),  # every rack switch of pod 1 loses one of its 4 spines
        ("superspine1", 4 / 3),  # cross-pod: 32 flows per spine uplink instead of 16, over 24 on the racks'
        ("pod1-spine1+superspine1", 16 / 9),  # pod 1's cross-pod flows on 3 spines x 1 uplink: 42.7 flows
    ],
)
def test_step_time_factor_matches_the_hand_computation(element: str, factor: float) -> None:
    result = small().evaluate(small().parse(element))
    assert result.step_factor == pytest.approx(factor)
    assert result.job_gpus_lost == 0 and result.unroutable_pairs == 0 and result.affects_job


def test_a_failed_leaf_or_nic_cable_stops_the_job() -> None:
    leaf = small().evaluate(small().parse("pod1-leaf1"))
    assert leaf.job_gpus_lost == 16 and leaf.gpus_lost == 16 and leaf.capacity_lost_gbps["nic"] == 16 * 400
    nic = small().evaluate(small().parse("pod1-leaf1:swp1"))
    assert nic.job_gpus_lost == 1 and nic.damage > small().evaluate(small().parse("superspine1")).damage


def test_losing_every_path_between_pods_is_unroutable_not_slow() -> None:
    result = small().evaluate(small().parse("pod:1:uplinks"))
    # pod 1's 16 x 2 servers' GPUs each lose their 4 cross-pod peers, in both directions.
    assert result.unroutable_pairs == 2 * 32 * 4 and result.affects_job


def test_a_fabric_bound_by_its_nics_loses_nothing_to_a_spine() -> None:
    lab = model(ROOT / "intent" / "lab.yaml", "ring", 8)
    result = lab.evaluate(lab.parse("spine1"))
    assert result.step_factor == pytest.approx(1.0) and not result.affects_job
    [finding] = failure_findings([result], "lab.yaml", 8)
    assert finding.status is Status.PASS and "costs the 8-GPU job nothing" in finding.message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuch", "is not a switch"),
        ("pod1-rack1-srv1", "is a server; fail its cable"),
        ("pod1-leaf1:swp99", "has no port swp99"),
        ("pod:x", "takes a number"),
        ("pod:9", "no switch of pod 9"),
        ("plane:1:uplinks", "only pod:N:uplinks"),
        ("", "empty"),
    ],
)
def test_unknown_elements_say_what_they_could_be(spec: str, message: str) -> None:
    with pytest.raises(FailureSpecError, match=message):
        small().parse(spec)


def test_what_if_enumerates_every_element_ranked_by_damage() -> None:
    elements, sizes = small().single_failures()
    assert sizes == {"leaf": 4, "spine": 8, "superspine": 2, "leaf-spine cable": 16, "spine-superspine cable": 16,
                     "NIC cable": 64}  # fmt: skip
    assert len(elements) == sum(sizes.values())
    sampled, _ = small().single_failures(sample=3)
    assert len(sampled) == sum(min(3, n) for n in sizes.values())
    findings = failure_findings([small().evaluate(e) for e in elements], "x", 64, sizes)
    assert len(findings) == len(sizes)  # the worst of each class
    assert "worst of 4 evaluated of 4 leaves; 4 hurt the job" in findings[0].message


def test_cli_fail_and_what_if_write_the_blast_radius(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    base = [sys.executable, "-m", "netfab.cli.app", "analyze", str(SMALL), "--pattern", "alltoall", "--placement"]
    args = [*base, "packed", "--job-gpus", "64", "--trials", "10", "--out", str(tmp_path)]
    run = subprocess.run([*args, "--fail", "superspine1", "--what-if", "single-failures"], capture_output=True,
                         text=True, env=env, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "FAILURES" in run.stdout and "failing superspine1 slows the 64-GPU job's step 1.33x" in run.stdout
    doc = json.loads((tmp_path / "analysis.json").read_text())["failures"]
    assert doc["evaluated"] == 1 + 4 + 8 + 2 + 16 + 16 + 50
    assert (tmp_path / "failures.svg").read_text().startswith("<svg")
    bad = subprocess.run([*args, "--fail", "nosuch"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert bad.returncode == 2 and "is not a switch" in bad.stderr and "Traceback" not in bad.stderr


def test_a_throttled_port_slows_only_its_direction() -> None:
    lab = model(ROOT / "intent" / "lab.yaml", "ring", 8)
    # The lab ring is bound by its NICs: the leaf port toward one NIC at a quarter makes every step 4x.
    nic = lab.plan.servers[0].nics[0]
    slow = lab.evaluate(lab.parse(f"{nic.leaf}:{nic.leaf_port}@0.25"))
    assert slow.step_factor == pytest.approx(4.0) and slow.affects_job
    assert slow.capacity_lost_gbps == {"throttled": pytest.approx(75.0)}
    assert slow.as_dict()["throttled"] == [f"{nic.leaf}:{nic.leaf_port}@0.25"]
    # Halving one leaf uplink leaves the NICs the bottleneck (half a flow per uplink at 50 G = 1 flow at 100 G).
    uplink = next(i for i in lab.plan.devices[nic.leaf].interfaces if i.peer_device and "spine" in i.peer_device)
    half = lab.evaluate(lab.parse(f"{nic.leaf}:{uplink.name}@50%"))
    assert half.step_factor == pytest.approx(1.0) and not half.affects_job
    # A spine's egress toward that leaf is the other direction of the same cable: it too only at 0.25.
    assert lab.evaluate(lab.parse(f"{uplink.peer_device}:{uplink.peer_port}@0.25")).step_factor == pytest.approx(2.0)


@pytest.mark.parametrize(
    "spec", ["pod1-leaf1:swp17@0", "pod1-leaf1:swp17@1.5", "pod1-leaf1:swp17@x", "pod1-spine1@0.5"]
)
def test_throttle_fractions_and_targets_are_checked(spec: str) -> None:
    with pytest.raises(FailureSpecError, match=r"fraction in|only a DEVICE:PORT"):
        small().parse(spec)
