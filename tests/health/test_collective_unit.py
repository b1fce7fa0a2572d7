"""The collective harness without a lab: option parsing, worker choice, flow patterns, step statistics, tc commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netfab.cli.collective_cmd import parse_size
from netfab.lab import LabError
from netfab.lab import collective_shaping as shaping
from netfab.lab.collective import (
    Endpoint,
    FlowResult,
    StepResult,
    endpoints_from_plan,
    flows_for,
    parse_random_throttle,
    parse_throttle,
    pick_workers,
)
from netfab.lab.collective_shaping import Port, Shaper, parse_rate
from tests.health.conftest import HealthLab


def _ep(host: int, rail: int) -> Endpoint:
    return Endpoint(f"host{host}", f"eth{rail - 1}", f"10.{rail}.0.{host}", rail, f"leaf{rail}", f"swp{host}")


def test_rates_sizes_and_throttles_parse_or_say_why() -> None:
    assert parse_rate("200mbit") == 200_000_000
    assert parse_rate("1.5Gbit") == 1_500_000_000
    assert parse_size("16MiB") == 16 << 20 and parse_size("512k") == 512 << 10 and parse_size("1000") == 1000
    assert parse_throttle("leaf2:swp3=50mbit").port == Port("leaf2", "swp3")
    rnd = parse_random_throttle("0.1=25mbit")
    assert (rnd.probability, rnd.rate_bps) == (0.1, 25_000_000)
    for bad, call in (("200mb", parse_rate), ("fast", parse_rate), ("1bit", parse_rate)):
        with pytest.raises(ValueError, match="rate"):
            call(bad)
    with pytest.raises(ValueError, match="NODE:PORT=RATE"):
        parse_throttle("leaf2=50mbit")
    with pytest.raises(ValueError, match="0 <= P <= 1"):
        parse_random_throttle("1.5=50mbit")
    with pytest.raises(ValueError, match="between"):
        parse_size("2GiB")


def test_workers_are_taken_round_robin_over_rails_and_rings_stay_in_a_rail() -> None:
    eps = [_ep(h, r) for h in range(1, 5) for r in (1, 2)]
    four = pick_workers(eps, 4)
    assert [(e.host, e.rail) for e in four] == [("host1", 1), ("host1", 2), ("host2", 1), ("host2", 2)]
    ring = flows_for(pick_workers(eps, None), "ring")
    assert len(ring) == 8 and all(a.rail == b.rail and a.host != b.host for a, b in ring)
    assert sorted(b for _, b in ring) == sorted(eps)  # every worker receives exactly one flow
    a2a = flows_for(eps, "alltoall")
    assert len(a2a) == 2 * 4 * 3
    with pytest.raises(LabError, match="only one worker"):
        flows_for(pick_workers(eps, 3), "ring")
    with pytest.raises(LabError, match="cannot run 9 workers"):
        pick_workers(eps, 9)


def test_endpoints_come_from_the_plan_servers() -> None:
    from tests.analyze_lab.labcheck_helpers import lab_plan

    eps = endpoints_from_plan(lab_plan())
    assert len(eps) == 8
    assert {(e.leaf, e.leaf_port) for e in eps if e.host == "host1"} == {("leaf1", "swp1"), ("leaf2", "swp1")}


def test_step_time_is_the_slowest_flow_and_idle_is_measured_on_the_healthy_workers() -> None:
    flows = [
        FlowResult("f0", "a", "b", 10, 0.010),
        FlowResult("f1", "b", "c", 10, 0.020),
        FlowResult("f2", "c", "a", 10, 0.200, ("leaf1:swp1",)),
    ]
    step = StepResult(0, flows, {"leaf1:swp1": 1}, 3.0, 0.02)
    assert step.step_time_s == 0.200
    assert step.median_flow_s == 0.020
    assert step.idle_fraction == pytest.approx(((0.2 - 0.01) / 0.2 + (0.2 - 0.02) / 0.2) / 2)
    assert step.slow
    healthy = StepResult(1, flows[:2], {}, 3.0, 0.02)
    assert not healthy.slow and healthy.step_time_s == 0.020
    timed_out = StepResult(2, [*flows[:2], FlowResult("f2", "c", "a", 10, None)], {}, 3.0, 0.02)
    assert timed_out.as_dict()["step_time_s"] is None and timed_out.slow


def test_shaper_changes_only_what_differs_and_refuses_foreign_qdiscs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[str], str | None]] = []

    class Done:
        returncode = 0
        stdout = json.dumps([{"dev": "swp1", "kind": "noqueue", "root": True}])

    def fake_run(argv: list[str], *, input: str | None = None, **_: Any) -> Done:
        calls.append((list(argv), input))
        return Done()

    monkeypatch.setattr(shaping, "run", fake_run)
    shaper = Shaper({"leaf1": "p-leaf1"}, [Port("leaf1", "swp1"), Port("leaf1", "swp2")])
    shaper.install()
    assert calls[-1][1] is not None and calls[-1][1].count("qdisc add") == 2
    shaper.apply({Port("leaf1", "swp2"): 50_000_000})
    assert calls[-1][1] == "qdisc change dev swp2 root handle 1: tbf rate 50000000bit burst 64kb limit 32mb\n"
    n = len(calls)
    shaper.apply({Port("leaf1", "swp2"): 50_000_000})
    assert len(calls) == n  # nothing changed, no tc at all
    with pytest.raises(LabError, match="not on the collective's paths"):
        shaper.apply({Port("leaf9", "swp1"): 1})
    Done.stdout = json.dumps([{"dev": "swp1", "kind": "tbf", "root": True}])
    with pytest.raises(LabError, match=r"will not replace other shaping on leaf1:swp1 \(root qdisc tbf\)"):
        Shaper({"leaf1": "p-leaf1"}, [Port("leaf1", "swp1")]).install()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bytes", "lots", "--steps", "3"], "is not a number of bytes"),
        (["--bytes", "1MiB", "--steps", "3", "--throttle", "leaf1=5mbit"], "NODE:PORT=RATE"),
        (["--bytes", "1MiB", "--steps", "3", "--pattern", "tree"], "unknown pattern"),
        (["--bytes", "1MiB", "--steps", "3", "--throttle-random", "2=5mbit"], "0 <= P <= 1"),
    ],
)
def test_bad_options_exit_2_before_anything_runs(args: list[str], message: str) -> None:
    lab = HealthLab("nolab", "")
    proc = lab.netfab("lab", "collective", str(Path("intent/lab.yaml")), "--lab", "nolab", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
