"""NCCL acceptance: what nccl-tests should measure on this fabric, and whether a run did.

Bus bandwidth is nccl-tests' own figure (doc/PERFORMANCE.md of NVIDIA/nccl-tests): algbw x a per-collective
factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast and reduce 1), so
that it compares with the hardware's peak whatever the rank count. The expectation here is the bus bandwidth
the *network* allows a job of the run's shape on this design:

- ring-family collectives (all-reduce, all-gather, reduce-scatter, broadcast, reduce) spread their channels
  over the server's NICs, and each node boundary of a channel's ring crosses one NIC: the bus bandwidth is
  bounded by the sum of the NICs a server's ranks use (8 x 400G = 400 GB/s on an 8-NIC server). NCCL orders
  rings by topology, so a ring crosses a switch tier on a handful of edges and oversubscription does not
  bound it; the bottleneck named is the NIC.
- all-to-all sends (n-g)/n of every rank's data over its own NIC (PXN moves it onto the destination's rail
  inside the server first), so its bus bandwidth is the NIC's rate x (n-1)/(n-g), divided by the worst
  over-commitment of a tier the job crosses: the job's NIC traffic that must leave a leaf (or a pod), over
  that leaf's (pod's) uplink capacity. That is where an oversubscribed design shows.

NVLink and PCIe are not modelled: a server whose internal fabric is slower than its NICs shows as a failed
size with the NIC named, and the engineer looks inside the box. ECMP collisions are not in the expectation
either (analyze's ECMP model prices them separately); the efficiency threshold absorbs NCCL's own overheads.

Sizes whose ideal transfer time is short are latency-bound (NCCL's per-call cost dominates), so they are
reported as skipped rather than judged against a bandwidth they cannot reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from netfab.analyze.capacity import Capacity
from netfab.analyze.routing import FabricRoutes
from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status

Collective = Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce"]
COLLECTIVES: tuple[Collective, ...] = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce")

DEFAULT_EFFICIENCY = 0.80
"""Pass when the measured bus bandwidth reaches this share of the network bound. An acceptance choice (NCCL's
protocol and kernel overheads typically cost 5-15 % at large sizes), not a measured fact: set your own."""

LATENCY_BOUND_S = 1e-3
"""A size whose ideal transfer at the expected bus bandwidth takes less than this is latency-bound: NCCL's
per-call cost (tens of microseconds across nodes) is then more than a few percent of the time."""

RULES: tuple[RuleInfo, ...] = (
    RuleInfo(
        "NCCL001",
        "nccl-tests bus bandwidth below the fabric's expectation",
        Severity.ERROR,
        "`netfab analyze --nccl-tests LOG`: a message size's bus bandwidth (nccl-tests' busbw) is below the "
        "efficiency threshold of what the design's network allows a job of the log's shape. The finding names "
        "the element that should be the bottleneck, so the search starts from what is slower than it.",
        hint="re-run with NCCL_DEBUG=INFO and check the NICs NCCL chose (NCCL_IB_HCA), the traffic class "
        "(NCCL_IB_TC), PFC/ECN counters on the named tier (netfab health), and the servers' internal links",
    ),
    RuleInfo(
        "NCCL002",
        "nccl-tests found wrong results",
        Severity.ERROR,
        "`netfab analyze --nccl-tests LOG`: nccl-tests' #wrong column is not zero: the collective returned "
        "corrupted data. No bandwidth figure of that run can be trusted.",
        hint="check GPU and NIC health (dmesg, mlx5 counters for out-of-sequence and discards) before anything else",
    ),
    RuleInfo(
        "NCCL003",
        "nccl-tests log does not match the fabric",
        Severity.WARNING,
        "`netfab analyze --nccl-tests LOG`: the log's hosts are not all servers of this fabric, or its ranks per "
        "host exceed the servers' NICs; the expectation falls back to the smallest scope that holds the job.",
        hint="run nccl-tests on hosts named as the plan names them, or pass the log of this fabric",
    ),
)

_BUSBW_FACTOR_NAME = {
    "all_reduce": "2(n-1)/n",
    "all_gather": "(n-1)/n",
    "reduce_scatter": "(n-1)/n",
    "alltoall": "(n-1)/n",
    "broadcast": "1",
    "reduce": "1",
}

_BY_NAME: dict[str, Collective] = {c: c for c in COLLECTIVES}
MAX_LOG_BYTES = 64 << 20
"""nccl-tests prints a few hundred lines; a larger file is not one run's log (bounded input)."""

_MPI_PREFIX = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_BINARY = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce)_perf\b")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)")
_NUMBER = re.compile(r"^\d+$")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")


class NcclLogError(ValueError):
    """The log is not nccl-tests output netfab can read. Carries the file and line for the message."""

    def __init__(self, source: str, line: int, message: str) -> None:
        self.source, self.line = source, line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True, slots=True)
class Measure:
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    wrong: int | None
    """nccl-tests' #wrong; None where the run did not check (N/A)."""


@dataclass(frozen=True, slots=True)
class NcclRow:
    line: int
    size_bytes: int
    count: int
    dtype: str
    redop: str
    out_of_place: Measure
    in_place: Measure | None

    @property
    def best_busbw(self) -> float:
        return max(self.out_of_place.busbw_gbs, self.in_place.busbw_gbs if self.in_place else 0.0)

    @property
    def wrong(self) -> int:
        return sum(m.wrong or 0 for m in (self.out_of_place, self.in_place) if m is not None)


@dataclass(frozen=True, slots=True)
class NcclRun:
    source: str
    collective: Collective
    ranks: int
    hosts: tuple[str, ...]
    """Distinct hosts in rank order."""
    rows: tuple[NcclRow, ...]

    @property
    def ranks_per_host(self) -> int:
        return self.ranks // max(1, len(self.hosts))


def parse_nccl_tests(text: str, source: str = "<log>", collective: str | None = None) -> NcclRun:
    """Read one nccl-tests run (stdout, optionally with mpirun's `[1,0]<stdout>:` prefixes and NCCL INFO lines).

    The collective comes from the log (the binary's name, e.g. 'Collective test starting: all_reduce_perf',
    or the command line), else from `collective`; the table's columns alone cannot tell all-reduce from
    reduce-scatter, so a log that names neither is refused rather than guessed.
    """
    named: str | None = None
    started: tuple[int, str] | None = None
    ranks: dict[int, str] = {}
    rows: list[NcclRow] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _MPI_PREFIX.sub("", raw).strip()
        if not line:
            continue
        if line.startswith("#"):
            if start := _STARTING.match(line):
                # Scripts that run every collective often append to one file; judging the second run's rows
                # against the first run's collective would pass or fail the wrong thing.
                if started is not None:
                    raise NcclLogError(
                        source,
                        number,
                        f"a second run ({start.group(1)}) starts here after {started[1]} at line {started[0]};"
                        " give each run its own --nccl-tests file",
                    )
                started = (number, start.group(1))
            if rank := _RANK.match(line):
                ranks[int(rank.group(1))] = rank.group(2)
            elif named is None and (binary := _BINARY.search(line)):
                named = binary.group(1)
            continue
        tokens = line.split()
        if len(tokens) >= 8 and _NUMBER.match(tokens[0]) and _NUMBER.match(tokens[1]):
            rows.append(_row(tokens, number, source))
        elif named is None and (binary := _BINARY.search(line)):
            named = binary.group(1)  # the command line, e.g. "$ mpirun ... ./build/alltoall_perf -b 8"
    if not rows:
        raise NcclLogError(source, 0, "no result rows (size count type ... busbw): is this nccl-tests output?")
    if not ranks:
        raise NcclLogError(
            source, 0, "no '#  Rank N ... on HOST device D' lines: run nccl-tests with its default header"
        )
    if collective is not None and named is not None and collective != named:
        raise NcclLogError(source, 0, f"the log is a {named} run, not {collective}")
    chosen = collective or named
    if chosen is None:
        raise NcclLogError(
            source,
            0,
            f"the log does not say which collective it ran; pass --nccl-collective ({', '.join(COLLECTIVES)})",
        )
    if chosen not in _BY_NAME:
        raise NcclLogError(source, 0, f"unknown collective {chosen!r}; one of {', '.join(COLLECTIVES)}")
    hosts = tuple(dict.fromkeys(ranks[r] for r in sorted(ranks)))
    return NcclRun(source, _BY_NAME[chosen], len(ranks), hosts, tuple(rows))


def _row(tokens: list[str], line: int, source: str) -> NcclRow:
    # size count type redop [root] | time algbw busbw #wrong | time algbw busbw #wrong (in-place may be absent).
    # nccl-tests before its root column (still in use in 2022, e.g. NVIDIA/nccl-tests#107, header "error")
    # prints 12 or 8 fields; with it 13 or 9.
    if len(tokens) not in (8, 9, 12, 13):
        raise NcclLogError(source, line, f"a result row of {len(tokens)} fields; nccl-tests prints 8, 9, 12 or 13")
    first = 5 if len(tokens) in (9, 13) else 4
    try:
        size, count = int(tokens[0]), int(tokens[1])
        oop = _measure(tokens[first : first + 4])
        inplace = _measure(tokens[first + 4 : first + 8]) if len(tokens) >= first + 8 else None
    except ValueError as exc:
        raise NcclLogError(source, line, f"unreadable result row ({exc})") from None
    return NcclRow(line, size, count, tokens[2], tokens[3], oop, inplace)


def _measure(cols: list[str]) -> Measure:
    time_us, algbw, busbw, wrong = cols
    return Measure(float(time_us), float(algbw), float(busbw), _wrong(wrong))


def _wrong(text: str) -> int | None:
    """#wrong as a count; None where nothing was counted: N/A, or the older layout's "error" column, which is
    the largest numeric deviation (a float such as 2e-07 that rounding makes non-zero), not a count."""
    if text == "N/A":
        return None
    try:
        return int(text)
    except ValueError:
        float(text)  # still a number, or the row is unreadable
        return None


@dataclass(frozen=True, slots=True)
class Expectation:
    collective: Collective
    ranks: int
    hosts: int
    nics_per_host: int
    busbw_gbs: float
    """The network's bound on nccl-tests' busbw for this job, GB/s (bytes, as nccl-tests prints)."""
    bottleneck: str
    why: str
    scope_known: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "collective": self.collective,
            "ranks": self.ranks,
            "hosts": self.hosts,
            "nics_per_host": self.nics_per_host,
            "busbw_factor": _BUSBW_FACTOR_NAME[self.collective],
            "expected_busbw_gbs": round(self.busbw_gbs, 3),
            "bottleneck": self.bottleneck,
            "why": self.why,
            "hosts_in_plan": self.scope_known,
        }


def expect(run: NcclRun, routes: FabricRoutes, capacity: Capacity) -> Expectation:
    """The network bound on the run's bus bandwidth (see the module doc for the model)."""
    nics = int(routes.nic_leaf.shape[1]) if routes.nic_leaf.ndim == 2 else 1
    per_host = run.ranks_per_host
    used = max(1, min(per_host, nics))
    nic_gbs = routes.nic_gbps / 8
    index = {name: i for i, name in enumerate(routes.server_names)}
    servers = [index[h] for h in run.hosts if h in index]
    known = len(servers) == len(run.hosts) and per_host <= nics
    if not known:
        # Hosts not in the plan: the smallest scope that holds the job, i.e. the packed servers in design
        # order - the most the network can give, so a shortfall is never blamed on the fabric wrongly.
        servers = list(range(min(len(run.hosts), routes.servers)))
    if run.collective != "alltoall":
        bound = used * nic_gbs
        why = (
            f"{used} NIC(s) per server at {routes.nic_gbps:g} Gb/s carry the ring's node boundaries "
            f"({used} x {nic_gbs:g} GB/s); rings ordered by topology are not bound by oversubscription"
        )
        return Expectation(run.collective, run.ranks, len(run.hosts), used, bound, "nic", why, known)
    n, g = run.ranks, per_host
    if n <= g:
        return Expectation(
            run.collective, n, len(run.hosts), used, 0.0, "none", "one server: the network is not used", known
        )
    peak = nic_gbs * (n - 1) / (n - g)
    factor, bottleneck, why = _alltoall_overcommit(np.asarray(servers, dtype=np.int64), used, routes, capacity)
    return Expectation(
        run.collective,
        n,
        len(run.hosts),
        used,
        peak / factor,
        bottleneck,
        f"each rank sends (n-g)/n of its data over its own {routes.nic_gbps:g}G NIC; {why}",
        known,
    )


def _alltoall_overcommit(
    servers: np.ndarray, nics: int, routes: FabricRoutes, capacity: Capacity
) -> tuple[float, str, str]:
    """How much slower than its NICs the job's all-to-all runs: the worst tier's job traffic over capacity."""
    hosts = servers.size
    leaves = routes.nic_leaf[servers, :nics]  # [host, nic] -> leaf
    nic_gbps = routes.nic_gbps
    worst, name, why = 1.0, "nic", "no tier the job crosses has less uplink capacity than its NICs send"
    leaf_up = capacity.tiers["leaf"].up_gbps if "leaf" in capacity.tiers else 0.0
    if leaf_up > 0 and hosts > 1:
        ids, per_leaf = np.unique(leaves, return_counts=True)
        # A NIC's peers on the same leaf are the other job NICs there; the rest of its traffic climbs.
        leaving = per_leaf * nic_gbps * (hosts - per_leaf) / (hosts - 1)
        factor = float((leaving / leaf_up).max())
        if factor > worst + 1e-9:
            top = int(ids[int((leaving / leaf_up).argmax())])
            worst, name = factor, "leaf_uplinks"
            why = (
                f"leaf {routes.leaf_names[top]} must send {float(leaving.max()):g} Gb/s of the job's traffic "
                f"up {leaf_up:g} Gb/s of uplinks ({factor:.2f}x over)"
            )
    spine = capacity.tiers.get("spine")
    if spine is not None and spine.up_gbps > 0 and routes.pods > 1 and hosts > 1:
        pods = routes.leaf_pod[leaves[:, 0]]
        pod_ids, per_pod = np.unique(pods, return_counts=True)
        spines_per_pod = max(1, spine.switches // routes.pods)
        leaving = per_pod * nics * nic_gbps * (hosts - per_pod) / (hosts - 1)
        factor = float((leaving / (spine.up_gbps * spines_per_pod)).max())
        if factor > worst + 1e-9:
            worst, name = factor, "spine_uplinks"
            why = (
                f"pod {int(pod_ids[int(leaving.argmax())]) + 1}'s spines must send {float(leaving.max()):g} Gb/s "
                f"of the job's traffic up {spine.up_gbps * spines_per_pod:g} Gb/s ({factor:.2f}x over)"
            )
    return worst, name, why


@dataclass(frozen=True, slots=True)
class SizeVerdict:
    row: NcclRow
    status: Status
    measured_gbs: float
    threshold_gbs: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "size_bytes": self.row.size_bytes,
            "measured_busbw_gbs": self.measured_gbs,
            "threshold_busbw_gbs": round(self.threshold_gbs, 3),
            "wrong": self.row.wrong,
            "status": self.status.value,
        }


@dataclass(frozen=True, slots=True)
class NcclAcceptance:
    run: NcclRun
    expectation: Expectation
    efficiency: float
    sizes: tuple[SizeVerdict, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.run.source,
            "efficiency": self.efficiency,
            "expectation": self.expectation.as_dict(),
            "sizes": [s.as_dict() for s in self.sizes],
        }

    def findings(self) -> list[Finding]:
        return acceptance_findings(self)


def judge(run: NcclRun, expectation: Expectation, efficiency: float = DEFAULT_EFFICIENCY) -> NcclAcceptance:
    if not 0 < efficiency <= 1:
        raise ValueError(f"efficiency {efficiency} must be in (0, 1]")
    threshold = expectation.busbw_gbs * efficiency
    verdicts = []
    for row in run.rows:
        measured = row.best_busbw
        if expectation.busbw_gbs <= 0 or _ideal_seconds(row, expectation) < LATENCY_BOUND_S:
            status = Status.SKIP
        else:
            status = Status.PASS if measured >= threshold else Status.FAIL
        verdicts.append(SizeVerdict(row, status, measured, threshold))
    return NcclAcceptance(run, expectation, efficiency, tuple(verdicts))


def _ideal_seconds(row: NcclRow, exp: Expectation) -> float:
    n = exp.ranks
    factor = {"all_reduce": 2 * (n - 1) / n, "broadcast": 1.0, "reduce": 1.0}.get(exp.collective, (n - 1) / n)
    # busbw = S/t x factor, so at the expected busbw t = S x factor / busbw.
    return row.size_bytes * factor / (exp.busbw_gbs * 1e9) if exp.busbw_gbs > 0 else 0.0


def acceptance_findings(result: NcclAcceptance) -> list[Finding]:
    exp, run = result.expectation, result.run
    where = Location(run.source)
    found: list[Finding] = []
    if not exp.scope_known:
        found.append(
            Finding(
                "NCCL003",
                Severity.WARNING,
                f"{run.source}: {len(run.hosts)} host(s) with {run.ranks_per_host} rank(s) each are not all servers "
                f"of this fabric with that many NICs; judged as the smallest scope holding the job",
                where,
                hint=RULES[2].hint,
                subject=Path(run.source).name,
            )
        )
    subject = Path(run.source).name
    skipped = [v for v in result.sizes if v.status is Status.SKIP]
    if skipped:
        # One line for the latency-bound sizes: a sweep from 8 B has a dozen of them, none of them news.
        span = f"{_size(skipped[0].row.size_bytes)} to {_size(skipped[-1].row.size_bytes)}"
        why = exp.why if exp.busbw_gbs <= 0 else f"latency-bound (ideal time < {LATENCY_BOUND_S * 1e3:g} ms)"
        found.append(
            Finding(
                "NCCL001",
                Severity.INFO,
                f"{run.collective} {span} ({len(skipped)} sizes) on {run.ranks} ranks / {len(run.hosts)} hosts: "
                f"{why}, not judged against bandwidth",
                Location(run.source, skipped[0].row.line),
                status=Status.SKIP,
                subject=subject,
            )
        )
    for v in result.sizes:
        row = v.row
        if row.wrong:
            found.append(
                Finding(
                    "NCCL002",
                    Severity.ERROR,
                    f"{run.collective} {_size(row.size_bytes)}: {row.wrong} wrong result(s)",
                    Location(run.source, row.line),
                    hint=RULES[1].hint,
                    subject=subject,
                )
            )
        if v.status is Status.SKIP:
            continue
        label = f"{run.collective} {_size(row.size_bytes)} on {run.ranks} ranks / {len(run.hosts)} hosts"
        share = v.measured_gbs / exp.busbw_gbs
        message = (
            f"{label}: busbw {v.measured_gbs:g} GB/s is {share:.0%} of the {exp.busbw_gbs:.1f} GB/s the network "
            f"allows (threshold {result.efficiency:.0%}); bottleneck {exp.bottleneck}: {exp.why}"
        )
        found.append(
            Finding(
                "NCCL001",
                Severity.ERROR if v.status is Status.FAIL else Severity.INFO,
                message,
                Location(run.source, row.line),
                hint=RULES[0].hint if v.status is Status.FAIL else "",
                status=v.status,
                subject=subject,
                expected=round(v.threshold_gbs, 3),
                actual=v.measured_gbs,
            )
        )
    return found


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def read_log(path: Path, collective: str | None = None) -> NcclRun:
    try:
        if path.stat().st_size > MAX_LOG_BYTES:
            raise NcclLogError(str(path), 0, f"larger than {MAX_LOG_BYTES >> 20} MiB: not one nccl-tests run")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise NcclLogError(str(path), 0, f"cannot read: {exc.strerror or exc}") from None
    return parse_nccl_tests(text, str(path), collective)
