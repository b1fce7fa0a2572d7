"""Issue 15 point 2: the failure model's step-time factor against the barrier harness on the real lab.

Every scenario is a `--fail` element for the model and the same fault on the running lab (tc tbf throttles,
ports set down), with a collective ring on every rail (`netfab.lab.collective.run_collective`). Every port the
ring can use (each leaf's port toward its NICs, each leaf uplink and spine downlink) is shaped to one rate R,
so the lab has the plan's proportions (every link of intent/lab.yaml is 100G): the measured factor is a
scenario's median step time over the unfaulted median.

Classes and what the model should get right:
- nic-throttled: a leaf port toward one NIC keeps a fraction f: the ring is bound by its NICs, so 1/f;
- cable-down / spine-down / cable-down+nic: BGP reconverges and each leaf's one fabric flow of a rail moves
  to what is left, which still carries it at R: 1.0 (or 1/f with the throttled NIC);
- uplinks-throttled (the model's stated error): both uplinks of a leaf at one half. Fluid ECMP splits the
  leaf's one flow over them (half a flow on each half-rate link: 1.0); a real hash puts the whole flow on
  one of them, so the lab measures 2.0. Fluid splitting is right where many flows share a group (the
  fabrics netfab is for) and wrong by up to the group width where one flow does; the ECMP model's per-flow
  trials price that case. The test holds the error to its stated size so a change in either shows.

Measured on this machine: see docs/analyze.md section 9 (the table there is this test's output).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from labcheck_helpers import RunningLab
from labcheck_helpers import lab_plan as design_lab_plan

from netfab.analyze.collective import gpu_pairs, place_job
from netfab.analyze.failure import FailureModel
from netfab.analyze.flows import flow_set
from netfab.analyze.routing import build_routes
from netfab.lab.collective import CollectiveSpec, Throttle, endpoints_from_plan, flows_for, run_collective
from netfab.lab.collective_shaping import Port
from netfab.lab.frr import vtysh
from netfab.lab.health import wait_ready
from netfab.lab.proc import in_netns, run
from netfab.lab.state import load_state

pytestmark = pytest.mark.lab

# Designed once: every scenario, shaping list and path check reads the same plan.
lab_plan = cache(design_lab_plan)

RATE_BPS = 20_000_000
"""R: every shaped port's rate. Far below what a veth carries here even on a loaded machine, so the shapers
set the step time (at 400 Mbit/s and load 11 a CPU-bound TCP stack did, and factors came out compressed)."""
BYTES = 750_000
"""Per flow and step: 300 ms at R, long against the scheduling noise of a busy 2-core machine (tens of ms)."""
SETTLE_S = 2.0
BASELINE_EVERY = 4
"""Scenarios between two unfaulted runs (their median is the unfaulted step time)."""
STEPS = 5
TOLERANCE = 0.10
STATED = (1.8, 2.2)
"""The measured factor of the uplinks-throttled class: the fluid model's stated error, 2x, within 10 %."""


@dataclass(frozen=True)
class LabScenario:
    label: str
    kind: str
    element: str
    """The --fail element the model evaluates."""
    throttles: tuple[tuple[str, str, float], ...] = ()
    """(switch, port, fraction of R) on the lab."""
    down: tuple[tuple[str, str], ...] = ()


def _scenarios() -> list[LabScenario]:
    plan = lab_plan()
    nics = [n for s in plan.servers for n in s.nics]
    fabric = [lk for lk in plan.links if lk.tier == "leaf_spine"]  # a = spine end, b = leaf end
    out: list[LabScenario] = []
    for nic, f in zip(nics, (0.5, 0.25, 0.5, 1 / 3, 0.25, 0.5, 1 / 3, 0.25), strict=True):
        out.append(
            LabScenario(
                f"{nic.leaf}:{nic.leaf_port} at {f:.2f}",
                "nic-throttled",
                f"{nic.leaf}:{nic.leaf_port}@{f}",
                ((nic.leaf, nic.leaf_port, f),),
            )
        )
    for lk in fabric:
        out.append(LabScenario(f"{lk.b_device}:{lk.b_port} down", "cable-down", f"{lk.b_device}:{lk.b_port}",
                               down=((lk.b_device, lk.b_port),)))  # fmt: skip
    for spine in sorted(d.name for d in plan.devices.values() if d.role == "spine"):
        ports = tuple((spine, i.name) for i in plan.devices[spine].interfaces if i.peer_device in plan.devices)
        out.append(LabScenario(f"{spine} down", "spine-down", spine, down=ports))
    for lk, nic in zip(fabric[::2], (nics[3], nics[4], nics[1], nics[6]), strict=True):
        out.append(
            LabScenario(
                f"{lk.b_device}:{lk.b_port} down + {nic.leaf}:{nic.leaf_port} at 0.50",
                "cable-down+nic",
                f"{lk.b_device}:{lk.b_port}+{nic.leaf}:{nic.leaf_port}@0.5",
                ((nic.leaf, nic.leaf_port, 0.5),),
                ((lk.b_device, lk.b_port),),
            )
        )
    for leaf in ("leaf1", "leaf4"):
        ups = [lk for lk in fabric if lk.b_device == leaf]
        out.append(
            LabScenario(
                f"{leaf} uplinks at 0.50",
                "uplinks-throttled",
                "+".join(f"{lk.b_device}:{lk.b_port}@0.5" for lk in ups),
                tuple((lk.b_device, lk.b_port, 0.5) for lk in ups),
            )
        )
    return out


def _shaped_ports() -> list[Port]:
    plan = lab_plan()
    ports = [Port(n.leaf, n.leaf_port) for s in plan.servers for n in s.nics]
    for lk in plan.links:
        if lk.tier == "leaf_spine":
            ports += [Port(lk.a_device, lk.a_port), Port(lk.b_device, lk.b_port)]
    return ports


def _model() -> FailureModel:
    plan = lab_plan()
    routes = build_routes(plan, 2)
    job = place_job(routes, routes.servers * routes.gpus_per_server, "packed", 1)
    return FailureModel(plan, routes, flow_set(routes, gpu_pairs(job, "ring")))


def _set_links(prefix: str, ports: tuple[tuple[str, str], ...], state_word: str) -> None:
    state = load_state(prefix)
    for device, port in ports:
        run(["ip", "-n", state.switches[device].namespace, "link", "set", "dev", port, state_word])


def _wait_sessions(prefix: str, timeout: float = 30.0) -> None:
    """Until every BGP session is back: all that may still be missing is ECMP width (see _reinstall_ecmp)."""
    deadline = time.monotonic() + timeout
    while True:
        missing, _ = wait_ready(load_state(prefix), 0.0)
        if all("ECMP next hops" in m for m in missing):
            return
        assert time.monotonic() < deadline, f"lab {prefix}: sessions not back within {timeout:.0f} s: {missing}"
        time.sleep(0.5)


def _reinstall_ecmp(prefix: str, switches: set[str]) -> None:
    """Give these switches back their full ECMP groups after a link came back.

    Measured with this lab's FRR 8.4 (Debian): when a link goes down the kernel drops that next hop from
    zebra's nexthop group, and when it comes back zebra keeps using the group id it believes intact, so a
    leaf stays on one uplink (`wait_ready` then reports "1 of 2 ECMP next hops"). Deleting the kernel's
    group objects makes zebra create them afresh, and a BGP reset reinstalls the routes on them.
    """
    state = load_state(prefix)
    for name in sorted(switches):
        rec = state.switches[name]
        shown = run(["ip", "-n", rec.namespace, "nexthop", "show"], check=False).stdout
        for line in shown.splitlines():
            if " group " in line:
                run(["ip", "-n", rec.namespace, "nexthop", "del", "id", line.split()[1]], check=False)
        vtysh(state.layout, rec.name, "-c", "clear bgp *")


RESTORE_ATTEMPTS = 4


def _restore_fabric(prefix: str, label: str) -> None:
    """Every session and every ECMP group back, and still so a moment later.

    One reinstall is not always enough: a CI run saw leaf3 keep 1 of 2 next hops for 60 s after it, the
    BGP reset's own session flap having caught zebra in the same state again. So the switches still short
    are reinstalled again, and the fabric counts as restored only when a second look, after SETTLE_S,
    agrees with the first (wait_ready stops polling a switch once it passed, so a relapse during the
    reset would otherwise go unseen and skew the next scenario).
    """
    _wait_sessions(prefix)
    state = load_state(prefix)
    short = set(state.switches)
    missing: list[str] = []
    for _ in range(RESTORE_ATTEMPTS):
        _reinstall_ecmp(prefix, short)
        missing, _ = wait_ready(state, 30.0)
        if not missing:
            time.sleep(SETTLE_S)
            missing, _ = wait_ready(state, 0.0)
            if not missing:
                return
        short = {m.split(":", 1)[0] for m in missing if "ECMP next hops" in m}
        if len(short) < len({m.split(":", 1)[0] for m in missing}):
            break  # a session is missing too: not the FRR 8.4 group trap, so no reinstall will mend it
    raise AssertionError(f"after {label}: {missing}")


def _wait_rerouted(prefix: str, timeout: float = 30.0) -> None:
    """Until every ring flow's path answers twice in a row: BGP has withdrawn what the failure took.

    The ports are set down here, not by run_collective, so that the measured steps start on a converged
    fabric, as the model's "after BGP reconverges" assumes.
    """
    state = load_state(prefix)
    pairs = flows_for(endpoints_from_plan(lab_plan()), "ring")
    deadline, good = time.monotonic() + timeout, 0
    while good < 2:
        ok = all(
            run(in_netns(state.hosts[a.host], ["ping", "-c1", "-W1", "-I", a.address, b.address]), check=False)
            .returncode == 0
            for a, b in pairs
        )  # fmt: skip
        good = good + 1 if ok else 0
        assert time.monotonic() < deadline, f"lab {prefix}: ring paths did not come back within {timeout:.0f} s"
    # A ping hashes unlike the ring's TCP flows: give the withdrawals time to reach every leaf, so no flow
    # is still hashed towards a spine that lost its way down.
    time.sleep(SETTLE_S)


def _median_step(prefix: str, scenario: LabScenario | None) -> float:
    fraction = {(d, p): f for d, p, f in scenario.throttles} if scenario else {}
    throttles = tuple(
        Throttle(port, int(RATE_BPS * fraction.get((port.node, port.port), 1.0))) for port in _shaped_ports()
    )
    down = scenario.down if scenario else ()
    spec = CollectiveSpec(bytes_per_worker=BYTES, steps=STEPS, throttles=throttles, flow_timeout_s=20)
    try:
        if down:
            _set_links(prefix, down, "down")
            _wait_rerouted(prefix)
        result = run_collective(prefix, endpoints_from_plan(lab_plan()), spec)
    finally:
        if down:
            _set_links(prefix, down, "up")
            _restore_fabric(prefix, str(scenario))
    times = [s.step_time_s for s in result.steps]
    assert all(t != float("inf") for t in times), f"{scenario}: a flow did not complete"
    return statistics.median(times)


@pytest.fixture(scope="module")
def measured(running_lab: RunningLab) -> Iterator[list[dict[str, object]]]:
    model = _model()
    scenarios = _scenarios()
    baselines: list[float] = []
    medians: list[float] = []
    for number, sc in enumerate(scenarios):
        if number % BASELINE_EVERY == 0:
            baselines.append(_median_step(running_lab.prefix, None))
        medians.append(_median_step(running_lab.prefix, sc))
    baselines.append(_median_step(running_lab.prefix, None))
    # One unfaulted step time for every scenario: the median over all unfaulted runs spread through the
    # test, so one run caught by a burst of other work on the machine does not skew its neighbours.
    baseline = statistics.median(baselines)
    rows: list[dict[str, object]] = []
    for sc, median in zip(scenarios, medians, strict=True):
        predicted = model.evaluate(model.parse(sc.element)).step_factor
        factor = median / baseline
        row: dict[str, object] = {"scenario": sc.label, "class": sc.kind, "predicted": round(predicted, 3)}
        if not _agrees(sc.kind, predicted, factor):
            # Measured once more, after the fabric was restored and settled again. Two of three runs on one VM
            # (4 Dec) had 2-5 scenarios 12-23 % slow, a different few each time and exact in the other runs,
            # with the unfaulted drift at 1.00-1.06: a stretched run, not the model, whose error (a 2x, as
            # uplinks-throttled shows) would repeat. Both figures are reported.
            row["first_measured"] = round(factor, 3)
            factor = _median_step(running_lab.prefix, sc) / baseline
        row.update({"measured": round(factor, 3), "error": round(factor / predicted - 1, 3)})
        rows.append(row)
    half = len(baselines) // 2
    drift = statistics.median(baselines[half:]) / statistics.median(baselines[:half])
    rows.append({"scenario": "later unfaulted runs over earlier ones", "class": "baseline", "predicted": 1.0,
                 "measured": round(drift, 3), "error": round(drift - 1, 3)})  # fmt: skip
    if out := os.environ.get("NETFAB_FAILURE_LAB_REPORT"):
        report = {"rate_bps": RATE_BPS, "bytes": BYTES, "baselines_s": baselines, "rows": rows}
        Path(out).write_text(json.dumps(report, indent=2))
    for r in rows:
        again = f" (first run {r['first_measured']})" if "first_measured" in r else ""
        print(f"{r['class']:<18} {r['scenario']:<40} {r['predicted']:>6} {r['measured']:>6}{again}")
    yield rows


def _agrees(kind: str, predicted: float, factor: float) -> bool:
    """The bar each class is held to: the stated error for uplinks-throttled, TOLERANCE for the others."""
    if kind == "uplinks-throttled":
        return STATED[0] <= factor <= STATED[1]
    return abs(factor / predicted - 1) <= TOLERANCE


def test_twenty_exact_scenarios_within_ten_percent(measured: list[dict[str, object]]) -> None:
    """At least 20 scenarios within 10 % of the prediction, and none far off.

    The lab shares 2 cores with everything else the machine runs: a burst of other work can stretch a run's
    steps, which the model cannot know about. So the bar is the issue's (20 within 10 %), every scenario is
    printed, and none may be off by more than a third (a wrong model is off by a factor of 2 or more here).
    """
    exact = [r for r in measured if r["class"] not in ("uplinks-throttled", "baseline")]
    assert len(exact) >= 22
    within = [r for r in exact if abs(float(r["error"])) <= TOLERANCE]  # type: ignore[arg-type]
    assert len(within) >= 20, [r for r in exact if r not in within]
    assert all(abs(float(r["error"])) <= 0.33 for r in exact), exact  # type: ignore[arg-type]
    assert {r["class"] for r in exact} == {"nic-throttled", "cable-down", "spine-down", "cable-down+nic"}
    # Not all 1.0: the throttles must show, or the harness measured nothing.
    assert max(float(r["measured"]) for r in exact) > 3.5  # type: ignore[arg-type]


def test_the_stated_error_of_fluid_splitting_holds(measured: list[dict[str, object]]) -> None:
    stated = [r for r in measured if r["class"] == "uplinks-throttled"]
    assert len(stated) == 2
    for r in stated:
        assert r["predicted"] == 1.0
        assert STATED[0] <= float(r["measured"]) <= STATED[1], r  # type: ignore[arg-type]


def test_the_machine_did_not_drift(measured: list[dict[str, object]]) -> None:
    """The unfaulted step at the end against the start: a lab left degraded by a scenario (e.g. ECMP groups
    not restored) would show here; a busy machine moves it by a few tens of percent at most."""
    [again] = [r for r in measured if r["class"] == "baseline"]
    assert abs(float(again["error"])) <= 0.33  # type: ignore[arg-type]
