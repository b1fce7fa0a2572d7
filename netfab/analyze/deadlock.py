"""PFC deadlock: can the lossless classes form a cyclic buffer dependency after a single failure?

PFC pauses a link's lossless queue when the next hop's buffer for that priority fills. If the queues that wait
on each other form a cycle (link a->b waits on b->c, ..., which waits on a->b), every queue of the cycle can
stop for good: a PFC deadlock, which no timer but the PFC watchdog's drop ever clears.

A fault-free Clos routes up then down, and up*/down* routes cannot close a cycle (every dependency goes from a
link to one in a later position of the order up-links < down-links). A cycle needs a *valley*: a path that
goes down and then up again. BGP installs valleys after a failure when a switch has lost every up-down route
to a destination and a neighbour below it offers a route back up that the AS-path loop check does not
reject; RFC 7938 (section 5.2) gives each tier of a pod one ASN for exactly this reason. During
reconvergence the old and new routes coexist on different switches (a switch bounces traffic down to a leaf
that still sends it back up), so the check takes, per failure, the union of the routes before and after it.

The model is BGP path-vector routing over the plan's own ASNs and cables: each switch keeps its shortest
AS paths that do not contain its own ASN and forwards over all of them (multipath with as-path relax, as
netfab renders it). Routing behaviour depends on the tiers and the ASN plan, not the fabric's size, so the
check runs on a sub-fabric of the plan (its first three pods or scalable units, three leaves in each, two planes,
two spines of each pod and plane, two superspines per plane) and enumerates every single link and switch failure there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status
from netfab.design.plan import DevicePlan, FabricPlan

TIER = {"leaf": 0, "spine": 1, "superspine": 2}
SUBFABRIC_DOMAINS = 3
SUBFABRIC_LEAVES = 3
SUBFABRIC_PER_PLANE = 2
SUBFABRIC_PLANES = 2

RULE = RuleInfo(
    "ANALYZE006",
    "PFC deadlock possible after a single failure",
    Severity.ERROR,
    "After one link or switch failure, BGP's reconverged routes (together with the routes still installed "
    "while it reconverges) make the lossless queues wait on each other in a cycle: a PFC deadlock. It takes "
    "a down-up (valley) route, which BGP installs when the AS-path loop check does not reject a route back "
    "up through a lower tier.",
    hint="give every spine of a pod one ASN and every superspine one ASN (RFC 7938 section 5.2), so BGP "
    "rejects down-up routes; the PFC watchdog only breaks a deadlock by dropping, it does not prevent one",
)

Link = tuple[str, str]
"""A directed link (from switch, to switch): one lossless egress queue per priority."""


@dataclass(frozen=True, slots=True)
class Failure:
    kind: str
    """'link' or 'device'."""
    element: tuple[str, ...]

    def __str__(self) -> str:
        return f"link {self.element[0]} - {self.element[1]}" if self.kind == "link" else f"switch {self.element[0]}"


@dataclass(frozen=True, slots=True)
class DeadlockResult:
    scenarios: int
    switches: int
    cables: int
    valleys: tuple[tuple[Failure, tuple[str, ...]], ...]
    """Failures that install a down-up route, with one such path (switch names)."""
    cycles: tuple[tuple[Failure, tuple[Link, ...]], ...]
    """Failures whose routes close a buffer-dependency cycle, with the cycle's links."""
    lossless: bool
    skipped: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "lossless_classes": self.lossless,
            "subfabric": {"switches": self.switches, "cables": self.cables},
            "failures_checked": self.scenarios,
            "valley_failures": len(self.valleys),
            "deadlock_failures": len(self.cycles),
            "examples": [{"failure": str(f), "cycle": [f"{a}->{b}" for a, b in cycle]} for f, cycle in self.cycles[:5]],
            "skipped": self.skipped,
        }


@dataclass
class RoutingGraph:
    """Switches with their ASNs and tiers (leaf 0, spine 1, superspine 2), the cables between them, and the
    leaves that originate host prefixes."""

    asn: dict[str, int]
    tier: dict[str, int]
    cables: list[tuple[str, str]]
    leaves: list[str]
    neighbours: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        nb: dict[str, set[str]] = defaultdict(set)
        for a, b in self.cables:
            nb[a].add(b)
            nb[b].add(a)
        self.neighbours = dict(nb)

    def without(self, failure: Failure) -> RoutingGraph:
        if failure.kind == "device":
            gone = failure.element[0]
            cables = [c for c in self.cables if gone not in c]
            keep = {k: v for k, v in self.asn.items() if k != gone}
            return RoutingGraph(keep, self.tier, cables, [leaf for leaf in self.leaves if leaf != gone])
        a, b = failure.element
        cables = [c for c in self.cables if c not in ((a, b), (b, a))]
        return RoutingGraph(self.asn, self.tier, cables, self.leaves)


def subfabric(plan: FabricPlan) -> RoutingGraph:
    """The plan's first pods/SUs, a few leaves in each, their spines and two superspines per plane."""
    leaves = sorted(plan.devices_of("leaf"), key=lambda d: d.index)
    domains: dict[int, list[DevicePlan]] = {}
    for leaf in leaves:
        domain = leaf.pod if leaf.pod is not None else (leaf.su or 1)
        if domain in domains or len(domains) < SUBFABRIC_DOMAINS:
            domains.setdefault(domain, [])
            if len(domains[domain]) < SUBFABRIC_LEAVES:
                domains[domain].append(leaf)
    kept = {d.name for group in domains.values() for d in group}
    # Two planes, two spines of each (pod, plane) and two superspines per plane: a valley needs a second
    # plane (or a second spine) to climb back up through, never a third.
    per_group: dict[tuple[int | None, int | None], int] = defaultdict(int)
    planes = sorted({d.plane for d in plan.devices.values() if d.plane is not None})[:SUBFABRIC_PLANES]
    for sw in sorted(plan.devices_of("spine"), key=lambda d: d.index) + sorted(
        plan.devices_of("superspine"), key=lambda d: d.index
    ):
        if sw.role == "spine" and sw.pod is not None and sw.pod not in domains:
            continue
        if sw.plane is not None and sw.plane not in planes:
            continue
        key = (sw.pod if sw.role == "spine" else -1, sw.plane)
        if per_group[key] < SUBFABRIC_PER_PLANE:
            per_group[key] += 1
            kept.add(sw.name)
    # One cable per switch pair is enough: parallel links share the routing decision and the queues' fate.
    cables = sorted(
        {
            tuple(sorted((lk.a_device, lk.b_device)))
            for lk in plan.links
            if lk.tier != "host" and lk.a_device in kept and lk.b_device in kept
        }
    )
    devices = plan.devices
    return RoutingGraph(
        asn={n: devices[n].asn for n in kept},
        tier={n: TIER.get(devices[n].role, 0) for n in kept},
        cables=[(a, b) for a, b in cables],
        leaves=[d.name for group in domains.values() for d in group],
    )


def next_hops(fabric: RoutingGraph, destination: str) -> dict[str, frozenset[str]]:
    """BGP's forwarding choice towards one leaf: per switch, the neighbours of its shortest loop-free AS paths.

    Breadth-first over path length: a switch settles at the first length at which some neighbour offers a
    path without its own ASN (shorter offers that all contain it are what the loop check rejects), which is
    where BGP's best-path selection converges without policy.
    """
    paths: dict[str, set[tuple[int, ...]]] = {destination: {()}}
    hops: dict[str, frozenset[str]] = {}
    frontier = [destination]
    while frontier:
        offers: dict[str, dict[tuple[int, ...], set[str]]] = defaultdict(dict)
        for nb in frontier:
            for node in fabric.neighbours.get(nb, ()):
                if node in paths:
                    continue
                own = fabric.asn[node]
                for p in paths[nb]:
                    adv = (fabric.asn[nb], *p)
                    if own not in adv:  # the AS-path loop check
                        offers[node].setdefault(adv, set()).add(nb)
        for node, best in offers.items():
            paths[node] = set(best)
            hops[node] = frozenset(nb for via in best.values() for nb in via)
        frontier = list(offers)
    return hops


def _valley(fabric: RoutingGraph, hops: dict[str, frozenset[str]], destination: str) -> tuple[str, ...] | None:
    tier = fabric.tier
    for u in sorted(hops):
        for v in sorted(hops[u]):
            if tier[v] < tier[u] and v != destination:
                for w in sorted(hops.get(v, ())):
                    if tier[w] > tier[v]:
                        return (u, v, w)
    return None


def _cycle(edges: dict[Link, set[Link]]) -> tuple[Link, ...] | None:
    """One cycle of the link-dependency graph (iterative depth-first search), or None."""
    state: dict[Link, int] = {}  # 1 on the current trail, 2 done
    for start in sorted(edges):  # sorted, so the cycle reported is the same on every run
        if state.get(start):
            continue
        state[start] = 1
        trail = [start]
        stack: list[Iterator[Link]] = [iter(sorted(edges.get(start, ())))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[trail.pop()] = 2
                stack.pop()
                continue
            seen = state.get(nxt, 0)
            if seen == 1:
                return tuple(trail[trail.index(nxt) :])
            if seen == 0:
                state[nxt] = 1
                trail.append(nxt)
                stack.append(iter(sorted(edges.get(nxt, ()))))
    return None


def check_deadlock(plan: FabricPlan) -> DeadlockResult:
    fabric = subfabric(plan)
    if not plan.qos.lossless_queues:
        return DeadlockResult(0, len(fabric.asn), len(fabric.cables), (), (), False, "no lossless class: PFC is off")
    before = {d: next_hops(fabric, d) for d in fabric.leaves}
    failures = [Failure("link", c) for c in fabric.cables] + [Failure("device", (n,)) for n in sorted(fabric.asn)]
    valleys: list[tuple[Failure, tuple[str, ...]]] = []
    cycles: list[tuple[Failure, tuple[Link, ...]]] = []
    for failure in failures:
        after_fabric = fabric.without(failure)
        # Both directions of every cable left: a tuple lookup, where a set per (u, v) was most of this loop.
        alive = {*after_fabric.cables, *((b, a) for a, b in after_fabric.cables)}
        union: dict[str, dict[str, frozenset[str]]] = {}
        found_valley: tuple[str, ...] | None = None
        for d in after_fabric.leaves:
            after = next_hops(after_fabric, d)
            merged = {
                u: frozenset(v for v in before[d].get(u, frozenset()) | after.get(u, frozenset()) if (u, v) in alive)
                for u in set(before[d]) | set(after)
                if u in after_fabric.asn
            }
            union[d] = merged
            found_valley = found_valley or _valley(after_fabric, merged, d)
        if found_valley is None:
            continue  # up*/down* only: no dependency cycle can close (see the module doc)
        valleys.append((failure, found_valley))
        edges: dict[Link, set[Link]] = defaultdict(set)
        for d, merged in union.items():
            for u, vs in merged.items():
                for v in vs:
                    if v == d:
                        continue
                    for w in merged.get(v, ()):
                        edges[(u, v)].add((v, w))
        if cycle := _cycle(edges):
            cycles.append((failure, cycle))
    return DeadlockResult(len(failures), len(fabric.asn), len(fabric.cables), tuple(valleys), tuple(cycles), True)


def deadlock_findings(result: DeadlockResult, source_file: str) -> list[Finding]:
    where = Location(source_file)
    if not result.lossless:
        return [
            Finding(RULE.id, Severity.INFO, f"PFC deadlock check skipped: {result.skipped}", where, status=Status.SKIP)
        ]
    scope = f"{result.scenarios} single failures of a {result.switches}-switch sub-fabric"
    if not result.cycles:
        extra = ""
        if result.valleys:
            extra = f"; {len(result.valleys)} of them install down-up routes but close no cycle"
        return [
            Finding(
                RULE.id,
                Severity.INFO,
                f"no cyclic buffer dependency on the lossless classes under any of {scope}{extra}",
                where,
                status=Status.PASS,
                path="underlay.asn",
            )
        ]
    failure, cycle = result.cycles[0]
    loop = " -> ".join([cycle[0][0], *(b for _, b in cycle)])
    return [
        Finding(
            RULE.id,
            Severity.ERROR,
            f"{len(result.cycles)} of {scope} close a cyclic buffer dependency on the lossless classes, "
            f"e.g. after {failure}: {loop} (the routes before and after reconvergence include down-up paths "
            f"such as {' -> '.join(result.valleys[0][1])})",
            where,
            hint=RULE.hint,
            path="underlay.asn",
        )
    ]
