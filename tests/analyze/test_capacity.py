"""Capacity figures of the example intents against values computed by hand from their YAML."""

from __future__ import annotations

import pytest
from analyze_helpers import example

from netfab.analyze.capacity import analyze_capacity, ring_allreduce_seconds

GB = 1_000_000_000


def test_ring_allreduce_bound_formula() -> None:
    # n GPUs each move 2(n-1)/n x S bytes at B: 8 GPUs, 1 GB, 100 Gb/s -> 1.75 GB * 8 / 100e9 = 0.14 s.
    assert ring_allreduce_seconds(8, GB, 100) == pytest.approx(0.14)
    assert ring_allreduce_seconds(2, GB, 400) == pytest.approx(GB * 8 / 400e9)
    assert ring_allreduce_seconds(1, GB, 400) == 0.0
    # Approaches 2 S / B for large n, never exceeds it.
    assert ring_allreduce_seconds(10**6, GB, 400) < 2 * GB * 8 / 400e9


def test_lab_capacity() -> None:
    cap = analyze_capacity(*example("lab"))
    # 4 leaves, each 2 servers x 100G down and 2 x 100G up: 1:1.
    leaf = cap.tiers["leaf"]
    assert (leaf.switches, leaf.down_gbps, leaf.up_gbps, leaf.oversubscription) == (4, 200, 200, 1.0)
    assert cap.gpus == 8
    # SU: 4 GPUs, half of them at 100G; fabric: min(4 x 100G, 2 leaves x 200G) = 400G.
    assert cap.scopes["su"].bisection_gbps == 200
    assert cap.scopes["fabric"].bisection_gbps == 400
    assert cap.allreduce["fabric"].seconds == pytest.approx(2 * 7 / 8 * GB * 8 / 100e9)
    assert cap.allreduce["fabric"].bottleneck == "nic"


def test_rail_4su_capacity() -> None:
    cap = analyze_capacity(*example("rail-4su"))
    leaf = cap.tiers["leaf"]
    # 32 leaves (4 SUs x 8 rails), each 32 x 400G down to servers and 32 x 400G up.
    assert (leaf.switches, leaf.down_gbps, leaf.up_gbps, leaf.oversubscription) == (32, 12_800, 12_800, 1.0)
    assert "spine" not in cap.tiers  # the 2-tier spine is the top: nothing to oversubscribe
    su, fabric = cap.scopes["su"], cap.scopes["fabric"]
    assert (su.instances, su.gpus, su.bisection_gbps) == (4, 256, 128 * 400)  # 51.2 Tb/s
    assert (fabric.gpus, fabric.bisection_gbps, fabric.limit) == (1024, 512 * 400, "nic")  # 204.8 Tb/s
    # Rail-aligned ring inside an SU never leaves the rail leaf; across SUs it crosses 1:1 leaves: NIC-bound.
    assert cap.allreduce["su"].seconds == pytest.approx(2 * 255 / 256 * GB * 8 / 400e9)
    assert cap.allreduce["fabric"].bottleneck == "nic"


def test_clos3_24k_capacity() -> None:
    cap = analyze_capacity(*example("clos3-24k"))
    leaf, spine = cap.tiers["leaf"], cap.tiers["spine"]
    # Rack leaf: 2 servers x 8 GPUs x 400G = 6.4T down, 16 x 400G up.
    assert (leaf.switches, leaf.down_gbps, leaf.up_gbps, leaf.oversubscription) == (1536, 6400, 6400, 1.0)
    # Cluster spine: 192 racks x 1 link down, 28 x 400G up: 76.8T / 11.2T = 192/28 = 6.857 (declared 7).
    assert (spine.switches, spine.down_gbps, spine.up_gbps) == (128, 76_800, 11_200)
    assert spine.oversubscription == pytest.approx(192 / 28)
    assert spine.declared == 7.0
    assert cap.gpus == 24_576
    pod, fabric = cap.scopes["pod"], cap.scopes["fabric"]
    assert (pod.instances, pod.gpus, pod.bisection_gbps, pod.limit) == (8, 3072, 1536 * 400, "nic")  # 614.4 Tb/s
    # Across pods: 4 pods' spine uplinks = 4 x 16 x 11.2T = 716.8 Tb/s, below 12,288 GPUs x 400G.
    assert (fabric.bisection_gbps, fabric.limit) == (716_800, "spine_uplinks")
    assert cap.scopes["rack"].bisection_gbps == 8 * 400
    # All-reduce across pods scales by the spine tier's share 28/192; inside a pod the NIC is the bound.
    assert cap.allreduce["pod"].bottleneck == "nic"
    assert cap.allreduce["pod"].seconds == pytest.approx(2 * 3071 / 3072 * GB * 8 / 400e9)
    across = cap.allreduce["fabric"]
    assert across.bottleneck == "spine_uplinks"
    assert across.per_gpu_gbps == pytest.approx(400 * 28 / 192)
    assert across.seconds == pytest.approx(2 * 24575 / 24576 * GB * 8 / (400e9 * 28 / 192))


def test_a_three_tier_rail_design_has_its_spine_tier_and_pods() -> None:
    """rail-3tier: SUs grouped into pods under their own spines, superspines between the pods."""
    intent, plan = example("rail-3tier")
    cap = analyze_capacity(intent, plan)
    assert set(cap.tiers) == {"leaf", "spine"}
    assert set(cap.scopes) == {"su", "pod", "fabric"}
    assert cap.scopes["pod"].instances == 2 and cap.scopes["fabric"].crosses == ("leaf", "spine")
    assert cap.scopes["pod"].gpus * 2 == cap.gpus
