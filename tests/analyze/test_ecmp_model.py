"""Properties of the ECMP collision model that a wrong model would fail."""

from __future__ import annotations

import numpy as np
import pytest
from analyze_helpers import example, small_clos3

from netfab.analyze.collective import GpuPairs, gpu_pairs, place_job
from netfab.analyze.ecmp_model import EcmpModel, Scenario, comparison_scenarios
from netfab.analyze.flows import flow_set, ideal_loads
from netfab.analyze.hashing import DEST_QP, FIVE_TUPLE, mix32, next_hop
from netfab.analyze.routing import build_routes

WITH_QP = FIVE_TUPLE | {DEST_QP}


def _sixteen_flows_one_leaf(seed: int = 3) -> EcmpModel:
    """16 single-QP flows from one lab host to a host on another leaf: the lab leaf has 2 uplinks."""
    intent, plan = example("lab")
    routes = build_routes(plan, intent.topology.servers.gpus_per_server)
    assert routes.leaf_up.uniform == 2
    src = np.zeros(16, dtype=np.int64)
    pairs = GpuPairs(src_server=src, dst_server=src + 2, gpu=src)
    return EcmpModel(routes, flow_set(routes, pairs), seed, max_qps=16)


def test_one_qp_two_uplinks_sixteen_flows_tail_above_fair_share() -> None:
    result = _sixteen_flows_one_leaf().run(Scenario("s", "s", FIVE_TUPLE, 1), trials=2000)
    leaf_up = result.tiers["leaf_up"]
    assert leaf_up.fair_share_max == 8
    # Binomial(16, 1/2) split: the busier uplink's p99 is well above 8 (P(max >= 12) is about 7.7 %).
    assert leaf_up.busiest_flows.p99 > 8
    assert leaf_up.busiest_flows.p99 >= 12
    assert leaf_up.busiest_flows.p50 >= 8
    assert leaf_up.busiest_vs_fair.p99 > 1.0
    # The expected busier half of Binomial(16, 1/2) is 9.57.
    assert leaf_up.busiest_flows.mean == pytest.approx(9.57, abs=0.2)


def test_packet_spraying_is_exactly_fair_share() -> None:
    result = _sixteen_flows_one_leaf().run(Scenario("s", "s", WITH_QP, 1, ideal=True), trials=500)
    leaf_up = result.tiers["leaf_up"]
    assert leaf_up.busiest_flows.p99 == leaf_up.busiest_flows.max == leaf_up.fair_share_max == 8
    assert leaf_up.busiest_vs_fair.max == 1.0
    assert result.tax.max == 0.0


def _ring_model(seed: int, **lb: object) -> EcmpModel:
    intent, plan = small_clos3(**lb)
    routes = build_routes(plan, intent.topology.servers.gpus_per_server)
    job = place_job(routes, routes.servers * routes.gpus_per_server, "spread", seed)
    return EcmpModel(routes, flow_set(routes, gpu_pairs(job, "ring")), seed, max_qps=16)


def test_sixteen_qps_with_dest_qp_lower_p99_tax_than_one_qp() -> None:
    model = _ring_model(seed=5)
    one = model.run(Scenario("qp1", "qp1", FIVE_TUPLE, 1), trials=1000)
    sixteen = model.run(Scenario("qp16", "qp16", WITH_QP, 16), trials=1000)
    assert one.tax.p99 > 0.5  # one flow per GPU pair: any collision at least doubles a flow's time
    assert sixteen.tax.p99 < one.tax.p99
    assert sixteen.tax.p50 < one.tax.p50


def test_dest_qp_restores_entropy_when_the_nic_fixes_the_source_port() -> None:
    model = _ring_model(seed=5)
    fixed = model.run(Scenario("f", "f", FIVE_TUPLE, 16, sport="fixed"), trials=500)
    fixed_qp = model.run(Scenario("fq", "fq", WITH_QP, 16, sport="fixed"), trials=500)
    assert fixed.deterministic  # every QP of a pair hashes alike: 16 QPs buy nothing
    assert not fixed_qp.deterministic
    assert fixed_qp.tax.p99 < fixed.tax.p99


def test_seeded_runs_reproduce_and_different_seeds_differ() -> None:
    scenario = Scenario("s", "s", FIVE_TUPLE, 4)
    a = _ring_model(seed=11).run(scenario, trials=300)
    b = _ring_model(seed=11).run(scenario, trials=300)
    c = _ring_model(seed=12).run(scenario, trials=300)
    assert np.array_equal(a.tax_samples, b.tax_samples)
    assert np.array_equal(a.tiers["leaf_up"].busiest_samples, b.tiers["leaf_up"].busiest_samples)
    assert not np.array_equal(a.tiers["leaf_up"].busiest_samples, c.tiers["leaf_up"].busiest_samples)


def test_scenarios_share_random_draws() -> None:
    # 5-tuple with per-QP source ports and 5-tuple + dest QP draw from separate streams; the source-port
    # draws are the same in both, so 1-QP results do not depend on which other scenarios ran.
    model = _ring_model(seed=2)
    first = model.run(Scenario("a", "a", FIVE_TUPLE, 1), trials=200)
    model.run(Scenario("b", "b", WITH_QP, 16), trials=200)
    again = model.run(Scenario("a", "a", FIVE_TUPLE, 1), trials=200)
    assert np.array_equal(first.tax_samples, again.tax_samples)


def test_ideal_loads_conserve_flows_per_tier() -> None:
    _, plan = small_clos3()
    routes = build_routes(plan, 4)
    job = place_job(routes, 64, "spread", 1)
    flows = flow_set(routes, gpu_pairs(job, "alltoall"))
    ideal = ideal_loads(routes, flows)
    fabric = flows.intra.size + flows.cross.size
    assert ideal["host_up"].sum() == flows.count
    assert ideal["leaf_up"].sum() == pytest.approx(fabric)
    assert ideal["spine_down"].sum() == pytest.approx(fabric)
    assert ideal["spine_up"].sum() == pytest.approx(flows.cross.size)
    assert ideal["superspine_down"].sum() == pytest.approx(flows.cross.size)


def test_every_flow_is_counted_once_per_tier_it_crosses() -> None:
    model = _ring_model(seed=4)
    result = model.run(Scenario("s", "s", WITH_QP, 16), trials=50)
    fabric_flows = model.order.size * 16
    # Loads on a tier add up to the flows crossing it in every trial; checked via the slots routing returns.
    keys = np.random.default_rng(0).integers(0, 2**32, size=(3, fabric_flows), dtype=np.uint32)
    member = np.zeros_like(keys, dtype=np.int64) + np.repeat(np.arange(model.order.size) * model.paths.width, 16)
    slots = model._route(keys, member, 16)
    assert all((s >= 0).all() for s in slots.values())
    assert slots["leaf_up"].shape == slots["spine_down"].shape == (3, fabric_flows)
    assert slots["spine_up"].shape[1] == model.flows.cross.size * 16
    assert set(result.tiers) == {"leaf_up", "spine_down", "spine_up", "superspine_down"}


def test_shared_hash_seed_polarises_the_spine_uplinks() -> None:
    # Same seed on every switch: a spine only receives flows whose hash picked it at the leaf, and reduces the
    # same hash modulo its own group size, so it uses a fraction of its uplinks. Per-device seeds avoid that.
    spread = _ring_model(seed=6)
    polarised = _ring_model(seed=6, hash_seed=1234)
    scenario = Scenario("s", "s", WITH_QP, 16)
    job_alltoall = {}
    for name, model in (("spread", spread), ("polarised", polarised)):
        flows = flow_set(model.routes, gpu_pairs(place_job(model.routes, 64, "spread", 6), "alltoall"))
        job_alltoall[name] = EcmpModel(model.routes, flows, 6, 16).run(scenario, trials=200)
    assert (
        job_alltoall["polarised"].tiers["spine_up"].busiest_flows.p50
        > job_alltoall["spread"].tiers["spine_up"].busiest_flows.p50
    )


def test_comparison_scenarios_drop_duplicates_of_the_intent() -> None:
    own = Scenario("intent", "intent", WITH_QP, 16)
    keys = [s.key for s in comparison_scenarios(own)]
    assert "qp16_5tuple_destqp" not in keys
    assert keys[0] == "intent"
    assert "qp1_5tuple" in keys and "qp16_spraying" in keys


@pytest.mark.parametrize("modulus", [1, 2, 3, 7, 16, 28, 31, 64, 100, 256, 65_535, 1_048_579])
def test_next_hop_scalar_modulus_is_the_remainder(modulus: int) -> None:
    """next_hop's scalar fast paths (a mask for powers of two, h - (h // m) * m otherwise) pick the member
    plain `%` picks, for every key including the uint32 extremes, whichever integer type carries the size."""
    rng = np.random.default_rng(modulus)
    keys = rng.integers(0, 2**32, size=(8, 4096), dtype=np.uint32)
    keys[0, :4] = [0, 1, 2**31, 2**32 - 1]
    seeds = rng.integers(0, 2**32, size=4096, dtype=np.uint32)
    for seed in (seeds, 0x9E3779B1):
        expected = (mix32(keys ^ np.asarray(seed, dtype=np.uint32)) % np.uint32(modulus)).astype(np.int64)
        for size in (modulus, np.int64(modulus), np.uint32(modulus)):
            got = next_hop(keys, seed, size)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, expected)
