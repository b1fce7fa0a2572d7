"""The aggregated ECMP draw (ecmp_aggregate.py) against the per-flow model it stands in for."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from analyze_helpers import example, small_clos3

import netfab.analyze.ecmp_model as ecmp_model
from netfab.analyze.collective import gpu_pairs, place_job
from netfab.analyze.ecmp_aggregate import NORMAL_MIN_FLOWS, TierClasses, draw_loads, independent_hops, tier_classes
from netfab.analyze.ecmp_model import EcmpModel, Scenario
from netfab.analyze.flows import flow_set
from netfab.analyze.hashing import DEST_QP, FIVE_TUPLE
from netfab.analyze.routing import FabricRoutes, build_routes


def _routes(name: str) -> FabricRoutes:
    intent, plan = example(name)
    return build_routes(plan, intent.topology.servers.gpus_per_server)


def _model(routes: FabricRoutes, gpus: int, pattern: str = "alltoall", qps: int = 16) -> EcmpModel:
    job = place_job(routes, gpus, "spread", 1)
    return EcmpModel(routes, flow_set(routes, gpu_pairs(job, pattern)), 1, qps)  # type: ignore[arg-type]


def _run(model: EcmpModel, scenario: Scenario, trials: int, budget: int, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(ecmp_model, "PER_FLOW_BUDGET", budget)
    return model.run(scenario, trials)


def test_classes_carry_exactly_the_fair_share() -> None:
    """Every class's expected load, summed per link, is the fair share the per-flow model computes."""
    for name, gpus in (("meta-3tier", 256), ("rail-4su", 128), ("clos3-24k", 512)):
        model = _model(_routes(name), gpus)
        classes = tier_classes(model.routes, model.flows, model.order, {t: v.slot for t, v in model.tiers.items()})
        assert set(classes) == set(model.tiers), name
        for tier, v in model.tiers.items():
            c = classes[tier]
            expected = np.bincount(
                c.slots.ravel(), weights=(c.count[:, None] * c.probs).ravel(), minlength=v.width + 1
            )[: v.width]
            np.testing.assert_allclose(expected, v.fair1, rtol=1e-9, err_msg=f"{name} {tier}")
            np.testing.assert_allclose(c.probs.sum(axis=1), 1.0, rtol=1e-12)


def test_all_to_all_agrees_with_per_flow_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """128-GPU all-to-all on the Meta-style 3-tier: same busiest-link tail per tier, same tax, both ways."""
    model = _model(_routes("meta-3tier"), 128)
    for qps in (1, 4):
        scenario = Scenario("s", "s", FIVE_TUPLE, qps)
        per_flow = _run(model, scenario, 2000, 10**15, monkeypatch)
        aggregated = _run(model, scenario, 2000, 0, monkeypatch)
        assert (per_flow.method, aggregated.method) == ("per_flow", "aggregated")  # type: ignore[attr-defined]
        for tier, a in per_flow.tiers.items():  # type: ignore[attr-defined]
            b = aggregated.tiers[tier]  # type: ignore[attr-defined]
            assert abs(a.busiest_flows.p50 - b.busiest_flows.p50) <= 1, (qps, tier)
            assert abs(a.busiest_flows.p99 - b.busiest_flows.p99) <= 1, (qps, tier)
            assert a.busiest_flows.mean == pytest.approx(b.busiest_flows.mean, rel=0.02), (qps, tier)
        assert per_flow.tax.p99 == pytest.approx(aggregated.tax.p99, abs=0.02), qps  # type: ignore[attr-defined]
        assert per_flow.tax.mean == pytest.approx(aggregated.tax.mean, abs=0.01), qps  # type: ignore[attr-defined]


def test_big_all_to_all_is_aggregated_and_equal_qp_scenarios_share_draws() -> None:
    model = _model(_routes("meta-3tier"), 512)
    assert model.order.size * 16 * 1000 > ecmp_model.PER_FLOW_BUDGET
    five = model.run(Scenario("a", "a", FIVE_TUPLE, 16), 1000)
    with_qp = model.run(Scenario("b", "b", FIVE_TUPLE | {DEST_QP}, 16), 1000)
    one = model.run(Scenario("c", "c", FIVE_TUPLE, 1), 1000)
    assert five.method == with_qp.method == one.method == "aggregated"
    np.testing.assert_array_equal(five.tax_samples, with_qp.tax_samples)
    assert five.trials == 1000 and not five.deterministic
    # Another trial count draws anew rather than reusing the 1,000 trials drawn for the same QP count.
    fewer = model.run(Scenario("d", "d", FIVE_TUPLE, 16), 200)
    assert fewer.trials == fewer.tax_samples.size == 200
    # More QPs per pair spread better: the ordering the per-flow model gives holds here too.
    assert one.tiers["leaf_up"].busiest_vs_fair.p99 > five.tiers["leaf_up"].busiest_vs_fair.p99 > 1.0


def test_shared_seeds_keep_per_flow_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leaf and a spine with one seed polarise; only per-flow hashing shows that, so it is kept."""
    routes = _routes("meta-3tier")
    assert independent_hops(routes)
    shared = dataclasses.replace(routes, spine_seed=np.full(routes.spine_seed.size, routes.leaf_seed[0]))
    assert not independent_hops(shared)
    model = _model(shared, 128)
    result = _run(model, Scenario("s", "s", FIVE_TUPLE, 4), 200, 0, monkeypatch)
    assert result.method == "per_flow"  # type: ignore[attr-defined]


def test_deterministic_pairs_are_routed_once_and_counted_per_qp() -> None:
    model = _model(_routes("meta-3tier"), 128)
    fixed = Scenario("f", "f", FIVE_TUPLE, 4, sport="fixed")
    four, one = model.run(fixed, 10), model.run(dataclasses.replace(fixed, qps=1), 10)
    assert four.deterministic and one.deterministic
    for tier, t in four.tiers.items():
        assert t.busiest_flows.max == 4 * one.tiers[tier].busiest_flows.max
    assert four.tax.p99 == one.tax.p99


def test_normal_draw_has_the_multinomial_mean_covariance_and_total() -> None:
    probs = np.array([[0.5, 0.25, 0.25, 0.0]])
    classes = TierClasses(np.array([4 * NORMAL_MIN_FLOWS]), np.array([[0, 1, 2, 3]]), probs)
    loads = draw_loads(classes, 3, 1, np.random.default_rng(7), 20_000)
    n = 4 * NORMAL_MIN_FLOWS
    np.testing.assert_allclose(loads.mean(axis=0), n * probs[0, :3], rtol=0.005)
    cov = np.cov(loads.T)
    p = probs[0, :3]
    np.testing.assert_allclose(cov, n * (np.diag(p) - np.outer(p, p)), rtol=0.05, atol=5)
    assert np.all(np.abs(loads.sum(axis=1) - n) <= 2)  # rounding only


def test_small_counts_are_drawn_exactly() -> None:
    classes = TierClasses(np.array([10]), np.array([[0, 1]]), np.array([[0.5, 0.5]]))
    loads = draw_loads(classes, 2, 1, np.random.default_rng(3), 5000)
    assert np.all(loads.sum(axis=1) == 10)
    assert np.all(loads == np.rint(loads))
    # Binomial(10, 1/2): P(all ten on one link) = 2/1024, so a few of 5,000 trials show it.
    assert 0 < np.sum(loads.max(axis=1) == 10) < 40


def test_ring_jobs_stay_per_flow() -> None:
    """Few flows per link is where the tiers' correlation matters: those jobs never reach the budget."""
    intent, plan = small_clos3()
    routes = build_routes(plan, intent.topology.servers.gpus_per_server)
    model = _model(routes, routes.servers * routes.gpus_per_server, "ring")
    assert model.run(Scenario("s", "s", FIVE_TUPLE, 16), 1000).method == "per_flow"
