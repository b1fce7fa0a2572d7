"""PFC deadlock check (ANALYZE006): cyclic buffer dependencies of the lossless classes under single failures.

Passing fixtures: the example intents (RFC 7938 numbering: one ASN per spine tier of a pod). Failing
fixture: the same intents with an ASN per spine (deadlock_fixtures/), which lets BGP install down-up routes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from netfab.analyze.deadlock import Failure, RoutingGraph, check_deadlock, deadlock_findings, next_hops
from netfab.cli.pipeline import load_plan
from netfab.core.findings import Status
from netfab.design.plan import FabricPlan

ROOT = Path(__file__).resolve().parents[2]
PER_SWITCH = Path(__file__).parent / "deadlock_fixtures" / "spine-asn-per-switch.yaml"


def plan_of(*files: Path) -> FabricPlan:
    return load_plan(list(files), strict=False).plan


def small(spine_asns: tuple[int, int]) -> RoutingGraph:
    """Two spines, three leaves, every leaf cabled to both spines."""
    asn = {"s1": spine_asns[0], "s2": spine_asns[1], "l1": 65101, "l2": 65102, "l3": 65103}
    tier = {"s1": 1, "s2": 1, "l1": 0, "l2": 0, "l3": 0}
    cables = [(s, leaf) for s in ("s1", "s2") for leaf in ("l1", "l2", "l3")]
    return RoutingGraph(asn, tier, cables, ["l1", "l2", "l3"])


def test_bgp_model_loop_check_rejects_valleys_when_spines_share_an_asn() -> None:
    failed = small((65000, 65000)).without(Failure("link", ("s1", "l1")))
    hops = next_hops(failed, "l1")
    assert "s1" not in hops  # every route back up through a leaf carries the spines' own ASN
    assert hops["l2"] == {"s2"} and hops["l3"] == {"s2"}


def test_bgp_model_installs_valleys_when_every_spine_has_its_own_asn() -> None:
    failed = small((65000, 65001)).without(Failure("link", ("s1", "l1")))
    hops = next_hops(failed, "l1")
    assert hops["s1"] == {"l2", "l3"}  # s1 -> l2 -> s2 -> l1: down, then up again
    assert hops["l2"] == {"s2"}  # the leaves' shortest path stays direct


@pytest.mark.parametrize("intent", ["rail-4su.yaml", "clos3-24k.yaml", "lab.yaml"])
def test_example_intents_have_no_deadlock_under_single_failures(intent: str) -> None:
    result = check_deadlock(plan_of(ROOT / "intent" / intent))
    assert result.lossless and result.scenarios > 0
    assert not result.valleys and not result.cycles
    [finding] = deadlock_findings(result, intent)
    assert finding.status is Status.PASS and finding.rule_id == "ANALYZE006"


@pytest.mark.parametrize("intent", ["rail-4su.yaml", "clos3-24k.yaml"])
def test_an_asn_per_spine_closes_cycles_after_a_single_failure(intent: str) -> None:
    result = check_deadlock(plan_of(ROOT / "intent" / intent, PER_SWITCH))
    assert result.cycles
    failure, cycle = result.cycles[0]
    # A cycle of directed links: each link's head is the next one's tail, and it closes.
    assert all(a[1] == b[0] for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True))
    [finding] = deadlock_findings(result, intent)
    assert finding.is_problem and "RFC 7938" in finding.hint and str(failure) in finding.message


def test_the_report_is_the_same_on_every_run() -> None:
    plan = plan_of(ROOT / "intent" / "rail-4su.yaml", PER_SWITCH)
    assert check_deadlock(plan).as_dict() == check_deadlock(plan).as_dict()


def test_analyze_cli_exits_1_on_a_deadlock_and_writes_it(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    args = [sys.executable, "-m", "netfab.cli.app", "analyze", "intent/rail-4su.yaml", str(PER_SWITCH)]
    run = subprocess.run(
        [*args, "--trials", "5", "--out", str(tmp_path), "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert run.returncode == 1, run.stderr
    assert [f["rule_id"] for f in json.loads(run.stdout)["findings"] if f["status"] == "fail"] == ["ANALYZE006"]
    doc = json.loads((tmp_path / "analysis.json").read_text())
    assert doc["pfc_deadlock"]["deadlock_failures"] > 0
