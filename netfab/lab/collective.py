"""The barrier experiment: N workers' fixed-size transfers start at once across the lab fabric, step after step.

A collective is a barrier: each step ends when its slowest flow ends, so one slow path sets every worker's step
time. `run_collective` reproduces that on a running lab (NEXT_WAVE.md §B): one worker per GPU NIC (a host
namespace's interface), a ring or all-to-all pattern inside each rail (the lab routes rails apart, as a
rail-optimized fabric does), persistent TCP connections as queue pairs, a common start instant per step, and
per flow the seconds until its receiver acknowledged the last byte. Throttles are tc tbf rates on switch-port
egress (collective_shaping); a random throttle slows each worker's access link (the leaf port toward the
receiving NIC, which every flow to that NIC crosses and no other flow does) with probability p per step, so
over many steps P(slow step) can be set against 1-(1-p)^n. Flows are TCP, not RDMA: a throttled port also
delays the acknowledgements its host returns, so that host's own outgoing flow is slowed too; a step is slow
exactly when some port is throttled either way.

This module is a library first (issue 15 reuses it for failure analysis): `run_collective(prefix, endpoints,
CollectiveSpec(...))` returns a typed CollectiveResult; the CLI only parses options and prints `as_dict()`.
Traffic flows only between namespaces of the lab named by the prefix.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from netfab.lab.collective_shaping import LINE_RATE_BPS, Port, Shaper, parse_rate
from netfab.lab.errors import LabError
from netfab.lab.proc import in_netns, run
from netfab.lab.state import LabState, load_state

Pattern = Literal["ring", "alltoall"]
PATTERNS: tuple[Pattern, ...] = ("ring", "alltoall")
WORKER_PORT = 7471
WORKER_SCRIPT = Path(__file__).with_name("collective_worker.py")
# How far ahead of "now" a step's start instant is set: every worker must have read its command by then.
START_AHEAD_S = 0.03
WARMUP_STEPS = 5


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One worker: a GPU's NIC in a host namespace, and the switch port it is cabled to."""

    host: str
    nic: str
    address: str
    rail: int | None
    leaf: str
    leaf_port: str

    @property
    def name(self) -> str:
        return f"{self.host}/{self.nic}"

    @property
    def access_port(self) -> Port:
        return Port(self.leaf, self.leaf_port)


@dataclass(frozen=True, slots=True)
class Throttle:
    port: Port
    rate_bps: int


@dataclass(frozen=True, slots=True)
class RandomThrottle:
    """Each worker's access port is throttled to rate_bps with this probability, independently per step."""

    probability: float
    rate_bps: int


@dataclass(frozen=True, slots=True)
class CollectiveSpec:
    bytes_per_worker: int
    steps: int
    pattern: Pattern = "ring"
    throttles: tuple[Throttle, ...] = ()
    random_throttle: RandomThrottle | None = None
    down: tuple[Port, ...] = ()
    """Ports set administratively down for the run (restored after): a failed link, for failure analysis."""
    seed: int = 1
    slow_factor: float = 3.0
    """A step is slow when its time exceeds slow_factor x the run's healthy step time (the median of unthrottled
    warm-up steps). NEXT_WAVE.md §B.3 compared with the step's own median flow, which stops working once half
    the flows of a step are slow (a throttled port also delays the acknowledgements its host sends)."""
    flow_timeout_s: float = 30.0


@dataclass(frozen=True, slots=True)
class FlowResult:
    id: str
    src: str
    dst: str
    bytes: int
    seconds: float | None
    """None: the flow did not complete within the timeout (a down path)."""
    throttled: tuple[str, ...] = ()
    """Throttled ports on this flow's known path (its receiver's access port; fabric ports when named)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.bytes,
            "seconds": None if self.seconds is None else round(self.seconds, 6),
            "throttled": list(self.throttled),
        }


@dataclass(slots=True)
class StepResult:
    step: int
    flows: list[FlowResult]
    throttled: dict[str, int]
    """Port -> bits/s throttled during this step."""
    slow_factor: float
    baseline_step_s: float
    """The healthy step time of this run (median of its unthrottled warm-up steps)."""

    @property
    def step_time_s(self) -> float:
        done = [f.seconds for f in self.flows if f.seconds is not None]
        return max(done) if len(done) == len(self.flows) and done else float("inf")

    @property
    def median_flow_s(self) -> float:
        done = [f.seconds for f in self.flows if f.seconds is not None]
        return statistics.median(done) if done else float("inf")

    @property
    def idle_fraction(self) -> float:
        """Mean share of the step the healthy workers (no throttled port on their flows) spent waiting."""
        step = self.step_time_s
        by_worker: dict[str, list[FlowResult]] = {}
        for f in self.flows:
            by_worker.setdefault(f.src, []).append(f)
        healthy = [fs for fs in by_worker.values() if not any(f.throttled for f in fs)]
        if not healthy or step in (0.0, float("inf")):
            return 0.0
        idle = [(step - max(f.seconds or step for f in fs)) / step for fs in healthy]
        return sum(idle) / len(idle)

    @property
    def slow(self) -> bool:
        return self.step_time_s > self.slow_factor * self.baseline_step_s

    def as_dict(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return None if v == float("inf") else round(v, 6)

        return {
            "step": self.step,
            "step_time_s": num(self.step_time_s),
            "median_flow_s": num(self.median_flow_s),
            "idle_fraction": round(self.idle_fraction, 4),
            "slow": self.slow,
            "throttled": dict(sorted(self.throttled.items())),
            "flows": [f.as_dict() for f in self.flows],
        }


@dataclass(slots=True)
class CollectiveResult:
    lab: str
    spec: CollectiveSpec
    endpoints: list[Endpoint]
    steps: list[StepResult] = field(default_factory=list)
    baseline_step_s: float = 0.0

    @property
    def workers(self) -> int:
        return len(self.endpoints)

    @property
    def p_slow_measured(self) -> float:
        return sum(s.slow for s in self.steps) / len(self.steps) if self.steps else 0.0

    @property
    def p_slow_expected(self) -> float | None:
        """1-(1-p)^n for a random throttle over n independent access links; None without one."""
        rnd = self.spec.random_throttle
        if rnd is None:
            return None
        return 1.0 - (1.0 - rnd.probability) ** self.workers

    def as_dict(self) -> dict[str, Any]:
        spec = self.spec
        times = [s.step_time_s for s in self.steps if s.step_time_s != float("inf")]
        return {
            "lab": self.lab,
            "pattern": spec.pattern,
            "bytes_per_worker": spec.bytes_per_worker,
            "workers": [e.name for e in self.endpoints],
            "throttles": {str(t.port): t.rate_bps for t in spec.throttles},
            "random_throttle": None
            if spec.random_throttle is None
            else {"probability": spec.random_throttle.probability, "rate_bps": spec.random_throttle.rate_bps},
            "down": [str(p) for p in spec.down],
            "summary": {
                "steps": len(self.steps),
                "slow_steps": sum(s.slow for s in self.steps),
                "p_slow_measured": round(self.p_slow_measured, 4),
                "p_slow_expected": None if self.p_slow_expected is None else round(self.p_slow_expected, 4),
                "step_time_p50_s": round(statistics.median(times), 6) if times else None,
                "step_time_max_s": round(max(times), 6) if times else None,
                "baseline_step_s": round(self.baseline_step_s, 6),
                "slow_criterion": f"step_time > {spec.slow_factor} x baseline_step_s (unthrottled warm-up steps)",
            },
            "steps": [s.as_dict() for s in self.steps],
        }


def endpoints_from_plan(plan: Any) -> list[Endpoint]:
    """Every GPU NIC of the plan's servers, with the leaf port it is cabled to."""
    return sorted(
        Endpoint(server.name, nic.netdev, nic.address.split("/")[0], nic.rail, nic.leaf, nic.leaf_port)
        for server in plan.servers
        for nic in server.nics
    )


def pick_workers(endpoints: Sequence[Endpoint], count: int | None) -> list[Endpoint]:
    """The first `count` workers, taken round-robin over the rails so each rail's ring has members on several
    hosts; all of them when count is None."""
    by_rail: dict[int | None, list[Endpoint]] = {}
    for e in endpoints:
        by_rail.setdefault(e.rail, []).append(e)
    order: list[Endpoint] = []
    rails = [sorted(v) for _, v in sorted(by_rail.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))]
    for i in range(max((len(r) for r in rails), default=0)):
        order += [r[i] for r in rails if i < len(r)]
    chosen = order if count is None else order[:count]
    if count is not None and len(chosen) < count:
        raise LabError(f"the lab has {len(order)} GPU NICs; cannot run {count} workers")
    return chosen


def flows_for(workers: Sequence[Endpoint], pattern: Pattern) -> list[tuple[Endpoint, Endpoint]]:
    """(sender, receiver) pairs: a ring or all-to-all inside each rail, never between NICs of one host."""
    by_rail: dict[int | None, list[Endpoint]] = {}
    for e in workers:
        by_rail.setdefault(e.rail, []).append(e)
    pairs: list[tuple[Endpoint, Endpoint]] = []
    for members in by_rail.values():
        if len(members) < 2:
            raise LabError(f"rail {members[0].rail} has only one worker ({members[0].name}): no flow to run")
        if pattern == "ring":
            pairs += [(members[i], members[(i + 1) % len(members)]) for i in range(len(members))]
        else:
            pairs += [(a, b) for a in members for b in members if a.host != b.host]
    same_host = [f"{a.name} -> {b.name}" for a, b in pairs if a.host == b.host]
    if same_host:
        raise LabError(f"flows between NICs of one host never reach the fabric: {', '.join(same_host)}")
    return pairs


def parse_throttle(text: str) -> Throttle:
    """'leaf2:swp3=200mbit' -> Throttle(Port('leaf2', 'swp3'), 200_000_000); ValueError when unreadable."""
    where, sep, rate = text.partition("=")
    node, colon, port = where.partition(":")
    if not (sep and colon and node and port):
        raise ValueError(f"throttle {text!r} is not NODE:PORT=RATE (e.g. leaf2:swp3=200mbit)")
    return Throttle(Port(node.strip(), port.strip()), parse_rate(rate))


def parse_random_throttle(text: str) -> RandomThrottle:
    """'0.1=200mbit' -> RandomThrottle(0.1, 200_000_000); ValueError when unreadable."""
    prob, sep, rate = text.partition("=")
    try:
        p = float(prob)
    except ValueError:
        p = -1.0
    if not sep or not 0.0 <= p <= 1.0:
        raise ValueError(f"random throttle {text!r} is not P=RATE with 0 <= P <= 1 (e.g. 0.1=200mbit)")
    return RandomThrottle(p, parse_rate(rate))


class _Worker:
    """The worker process of one host namespace, driven over its stdin/stdout JSON lines."""

    def __init__(self, host: str, namespace: str, addresses: list[str]) -> None:
        self.host = host
        argv = in_netns(namespace, [sys.executable, str(WORKER_SCRIPT), str(WORKER_PORT), *addresses])
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )

    def ask(self, message: Mapping[str, Any] | None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if message is not None:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise LabError(f"collective worker on {self.host} stopped: {err.strip()[-500:] or 'no output'}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        with suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=3)


StepHook = Callable[[int, Mapping[str, int]], None]


def run_collective(
    prefix: str,
    endpoints: Sequence[Endpoint],
    spec: CollectiveSpec,
    *,
    before_step: StepHook | None = None,
    after_step: Callable[[StepResult], None] | None = None,
) -> CollectiveResult:
    """Run spec.steps barrier steps among `endpoints` on the running lab `prefix` and return every flow's time.

    before_step(step, throttled) runs after the step's throttles are in place and before its flows start;
    after_step(result) once they all ended (counter snapshots for the health tests hang there). Throttles and
    down ports are undone before returning, whatever happens.
    """
    if spec.steps < 1 or spec.bytes_per_worker < 1:
        raise LabError("a collective needs at least one step and one byte per worker")
    state = load_state(prefix)
    pairs = flows_for(endpoints, spec.pattern)
    namespaces = {name: rec.namespace for name, rec in state.switches.items()}
    candidates = _shaped_ports(state, pairs, spec)
    rng = random.Random(spec.seed)
    per_flow = spec.bytes_per_worker if spec.pattern == "ring" else max(1, spec.bytes_per_worker // _peers(pairs))
    flow_ids = {pair: f"f{i}" for i, pair in enumerate(pairs)}
    hosts = sorted({e.host for pair in pairs for e in pair})
    shaper = Shaper(namespaces, candidates)
    workers: dict[str, _Worker] = {}
    result = CollectiveResult(prefix, spec, list(endpoints))
    try:
        _set_down(state, spec.down, up=False)
        shaper.install()
        for host in hosts:
            addresses = sorted({e.address for pair in pairs for e in pair if e.host == host})
            workers[host] = _Worker(host, state.hosts[host], addresses)
        for w in workers.values():
            if not w.ask(None).get("ready"):
                raise LabError(f"collective worker on {w.host} did not start")
        for host, w in workers.items():
            flows = [
                {"id": flow_ids[(a, b)], "src": a.address, "dst": b.address, "port": WORKER_PORT}
                for a, b in pairs
                if a.host == host
            ]
            answer = w.ask({"op": "connect", "flows": flows})
            if not answer.get("ok"):
                raise LabError(f"{host}: cannot open the collective's connections: {'; '.join(answer['errors'])}")
        fixed = {t.port: t.rate_bps for t in spec.throttles}
        receivers = sorted({b for _, b in pairs})
        with ThreadPoolExecutor(max_workers=len(workers)) as pool:

            def one_step(step: int, throttled: dict[Port, int], baseline: float) -> StepResult:
                shaper.apply(throttled)
                named = {str(p): bps for p, bps in throttled.items()}
                if before_step is not None and step >= 0:
                    before_step(step, named)
                start = time.monotonic() + START_AHEAD_S
                msgs = {
                    host: {
                        "op": "step",
                        "step": step,
                        "start": start,
                        "timeout": spec.flow_timeout_s,
                        "sizes": {flow_ids[(a, b)]: per_flow for a, b in pairs if a.host == host},
                    }
                    for host in workers
                }
                times: dict[str, float | None] = {}
                for answer in pool.map(lambda h: workers[h].ask(msgs[h]), workers):
                    times.update(answer["flows"])
                flows = [
                    FlowResult(
                        flow_ids[(a, b)],
                        a.name,
                        b.name,
                        per_flow,
                        times.get(flow_ids[(a, b)]),
                        tuple(str(p) for p in sorted(throttled) if p == b.access_port),
                    )
                    for a, b in pairs
                ]
                return StepResult(step, flows, named, spec.slow_factor, baseline)

            # Unthrottled warm-up steps (not reported) give the healthy step time that "slow" is measured
            # against: a step's own median is no baseline once half its flows are throttled.
            warm = [one_step(-1 - i, {}, 0.0).step_time_s for i in range(WARMUP_STEPS)]
            result.baseline_step_s = statistics.median(warm)
            for step in range(spec.steps):
                throttled = dict(fixed)
                if spec.random_throttle is not None:
                    for e in receivers:
                        if rng.random() < spec.random_throttle.probability:
                            throttled[e.access_port] = min(
                                throttled.get(e.access_port, LINE_RATE_BPS), spec.random_throttle.rate_bps
                            )
                res = one_step(step, throttled, result.baseline_step_s)
                result.steps.append(res)
                if after_step is not None:
                    after_step(res)
    finally:
        for w in workers.values():
            w.close()
        shaper.remove()
        _set_down(state, spec.down, up=True)
    return result


def _peers(pairs: Sequence[tuple[Endpoint, Endpoint]]) -> int:
    sends: dict[Endpoint, int] = {}
    for a, _ in pairs:
        sends[a] = sends.get(a, 0) + 1
    return max(sends.values())


def _shaped_ports(state: LabState, pairs: Sequence[tuple[Endpoint, Endpoint]], spec: CollectiveSpec) -> list[Port]:
    """Every switch port the run may throttle: the workers' access ports and the ports named in throttles."""
    ports = {e.access_port for pair in pairs for e in pair} | {t.port for t in spec.throttles}
    missing = []
    for p in sorted(ports):
        rec = state.switches.get(p.node)
        if rec is None:
            missing.append(f"{p} (no switch {p.node!r} in lab {state.prefix!r})")
            continue
        if not _has_link(rec.namespace, p.port):
            missing.append(f"{p} (no interface {p.port!r} on {p.node})")
    if missing:
        raise LabError("cannot throttle " + ", ".join(missing))
    return sorted(ports)


def _has_link(namespace: str, ifname: str) -> bool:
    return run(["ip", "-n", namespace, "link", "show", "dev", ifname], check=False).returncode == 0


def _set_down(state: LabState, ports: Sequence[Port], *, up: bool) -> None:
    for p in ports:
        rec = state.switches.get(p.node)
        if rec is None:
            raise LabError(f"cannot set {p} down: no switch {p.node!r} in lab {state.prefix!r}")
        run(
            ["ip", "-n", rec.namespace, "link", "set", "dev", p.port, "up" if up else "down"],
            check=not up,
            what=f"{p}: link {'up' if up else 'down'}",
        )
