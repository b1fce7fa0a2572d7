"""Capacity: per-tier oversubscription, bisection bandwidth per scope, and the ring all-reduce lower bound.

Figures come from the fabric plan's actual links (not the intent's declared ratios), so a design that cabled
fewer uplinks than intended shows here. Scopes are the fabric's natural job boundaries: a rail-optimized SU
(rail traffic stays on the rail's leaf) and the whole fabric; in clos3 a rack (one leaf), a pod, the fabric.

Ring all-reduce lower bound: each of n GPUs sends and receives 2(n-1)/n x S bytes, so the step takes at least
that over the per-GPU scale-out bandwidth B. Where the ring crosses an oversubscribed tier, each GPU gets
only the tier's share of B (B / oversubscription) - the worst case of a ring whose every edge crosses the
tier (ranks not ordered by topology). The tier with the smallest share is the bottleneck; with no
oversubscription the NIC itself is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netfab.analyze.ports import PortKinds, port_kinds
from netfab.design.plan import FabricPlan
from netfab.intent import Intent

DEFAULT_MESSAGE_BYTES = 1_000_000_000
"""All-reduce size for the bound: 1 GB (decimal, like link speeds), a typical gradient bucket sweep."""


@dataclass(frozen=True, slots=True)
class TierCapacity:
    tier: str
    """'leaf' or 'spine': the switches whose down:up ratio this is."""
    switches: int
    down_gbps: float
    """Per switch."""
    up_gbps: float
    oversubscription: float
    declared: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "switches": self.switches,
            "down_gbps_per_switch": self.down_gbps,
            "up_gbps_per_switch": self.up_gbps,
            "oversubscription": round(self.oversubscription, 4),
            "declared_oversubscription": round(self.declared, 4),
            "share": round(1 / self.oversubscription, 4),
        }


@dataclass(frozen=True, slots=True)
class ScopeCapacity:
    scope: str
    instances: int
    """How many such scopes the fabric has (SUs, pods...)."""
    gpus: int
    bisection_gbps: float
    limit: str
    """What sets the bisection: nic, leaf_uplinks or spine_uplinks."""
    crosses: tuple[str, ...]
    """Switch tiers a rail-aligned collective inside this scope crosses."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "gpus": self.gpus,
            "bisection_gbps": round(self.bisection_gbps, 3),
            "bisection_per_gpu_gbps": round(self.bisection_gbps / (self.gpus / 2), 3) if self.gpus > 1 else 0.0,
            "bisection_limit": self.limit,
            "crosses": list(self.crosses),
        }


@dataclass(frozen=True, slots=True)
class AllReduceBound:
    scope: str
    gpus: int
    message_bytes: int
    bytes_per_gpu: float
    per_gpu_gbps: float
    bottleneck: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "message_bytes": self.message_bytes,
            "bytes_per_gpu": round(self.bytes_per_gpu),
            "effective_per_gpu_gbps": round(self.per_gpu_gbps, 3),
            "bottleneck": self.bottleneck,
            "seconds": round(self.seconds, 6),
        }


@dataclass(frozen=True)
class Capacity:
    tiers: dict[str, TierCapacity]
    scopes: dict[str, ScopeCapacity]
    allreduce: dict[str, AllReduceBound]
    nic_gbps: float
    gpus: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "nic_gbps": self.nic_gbps,
            "tiers": {k: v.as_dict() for k, v in self.tiers.items()},
            "scopes": {k: v.as_dict() for k, v in self.scopes.items()},
            "allreduce_lower_bound": {k: v.as_dict() for k, v in self.allreduce.items()},
        }


def ring_allreduce_seconds(n: int, message_bytes: float, per_gpu_gbps: float) -> float:
    """Lower bound on a ring all-reduce of `message_bytes` over n GPUs, each with `per_gpu_gbps` out."""
    if n < 2:
        return 0.0
    return 2 * (n - 1) / n * message_bytes * 8 / (per_gpu_gbps * 1e9)


def analyze_capacity(
    intent: Intent, plan: FabricPlan, message_bytes: int = DEFAULT_MESSAGE_BYTES, counted: PortKinds | None = None
) -> Capacity:
    """`counted`: port_kinds(plan), when the caller has counted them already."""
    topo = intent.topology
    down: dict[str, float] = {}
    up: dict[str, float] = {}
    # Per kind, speed x count: speeds are whole Gb/s, so the float sums are exact and equal to the sums port by
    # port in any order.
    for name, kinds in (counted if counted is not None else port_kinds(plan)).items():
        for (_, role, speed, _), count in kinds.items():
            if role == "fabric_up":
                up[name] = up.get(name, 0.0) + speed * count
            else:
                down[name] = down.get(name, 0.0) + speed * count
    leaves = plan.devices_of("leaf")
    spines = plan.devices_of("spine")
    tiers = {"leaf": _tier("leaf", leaves, down, up, topo.leaf.oversubscription)}
    # Both styles can have a third tier (clos3 pods; rail_optimized with sus_per_pod): its spines have uplinks.
    three_tier = topo.superspine is not None and bool(plan.devices_of("superspine"))
    if three_tier:
        tiers["spine"] = _tier("spine", spines, down, up, topo.spine.oversubscription)
    gpus = sum(len(s.nics) for s in plan.servers)
    nic_gbps = max((lk.speed_gbps for lk in plan.links if lk.tier == "host"), default=0)
    leaf_up = tiers["leaf"].up_gbps
    scopes: dict[str, ScopeCapacity] = {}
    if plan.style == "rail_optimized":
        sus = topo.scalable_units or 1
        su_gpus = gpus // sus
        su_leaves = len(leaves) // sus
        scopes["su"] = _scope("su", sus, su_gpus, nic_gbps, [("leaf_uplinks", su_leaves / 2 * leaf_up)], ())
        if three_tier:
            # SUs grouped into pods under their own spines; between pods traffic climbs to the superspines.
            pods = -(-sus // (topo.sus_per_pod or sus))
            pod_up = tiers["spine"].up_gbps * len(spines) / pods
            scopes["pod"] = _scope(
                "pod", pods, gpus // pods, nic_gbps, [("leaf_uplinks", len(leaves) / pods / 2 * leaf_up)], ("leaf",)
            )
            cuts = [("leaf_uplinks", len(leaves) / 2 * leaf_up), ("spine_uplinks", pods / 2 * pod_up)]
            scopes["fabric"] = _scope("fabric", 1, gpus, nic_gbps, cuts, ("leaf", "spine"))
        else:
            scopes["fabric"] = _scope(
                "fabric", 1, gpus, nic_gbps, [("leaf_uplinks", len(leaves) / 2 * leaf_up)], ("leaf",)
            )
    elif not three_tier:
        # 2-tier top-of-rack (one pod, no superspine): racks under one spine tier, the fabric is the pod.
        scopes["rack"] = _scope("rack", len(leaves), gpus // len(leaves), nic_gbps, [], ())
        scopes["fabric"] = _scope("fabric", 1, gpus, nic_gbps, [("leaf_uplinks", len(leaves) / 2 * leaf_up)], ("leaf",))
    else:
        pods = topo.pods or 1
        rack_gpus = gpus // len(leaves)
        pod_gpus = gpus // pods
        pod_up = tiers["spine"].up_gbps * len(spines) / pods
        scopes["rack"] = _scope("rack", len(leaves), rack_gpus, nic_gbps, [], ())
        scopes["pod"] = _scope(
            "pod", pods, pod_gpus, nic_gbps, [("leaf_uplinks", len(leaves) / pods / 2 * leaf_up)], ("leaf",)
        )
        scopes["fabric"] = _scope(
            "fabric",
            1,
            gpus,
            nic_gbps,
            [("leaf_uplinks", len(leaves) / 2 * leaf_up), ("spine_uplinks", pods / 2 * pod_up)],
            ("leaf", "spine"),
        )
    allreduce = {
        name: allreduce_bound(name, scope.gpus, scope.crosses, tiers, nic_gbps, message_bytes)
        for name, scope in scopes.items()
    }
    return Capacity(tiers, scopes, allreduce, float(nic_gbps), gpus)


def allreduce_bound(
    scope: str,
    gpus: int,
    crosses: tuple[str, ...],
    tiers: dict[str, TierCapacity],
    nic_gbps: float,
    message_bytes: int,
) -> AllReduceBound:
    # The NIC wins ties: a 1:1 tier is not a bottleneck, the NIC's own rate is.
    bottleneck, share = "nic", 1.0
    for tier in crosses:
        tier_share = 1 / tiers[tier].oversubscription
        if tier_share < share - 1e-9:
            bottleneck, share = f"{tier}_uplinks", tier_share
    per_gpu = nic_gbps * share
    bytes_per_gpu = 2 * (gpus - 1) / gpus * message_bytes if gpus > 1 else 0.0
    return AllReduceBound(
        scope=scope,
        gpus=gpus,
        message_bytes=message_bytes,
        bytes_per_gpu=bytes_per_gpu,
        per_gpu_gbps=per_gpu,
        bottleneck=bottleneck,
        seconds=ring_allreduce_seconds(gpus, message_bytes, per_gpu),
    )


def _tier(name: str, devices: list[Any], down: dict[str, float], up: dict[str, float], declared: float) -> TierCapacity:
    # Designs give every switch of a tier the same ports; the worst switch is reported if they differ.
    worst = max(devices, key=lambda d: down.get(d.name, 0.0) / max(up.get(d.name, 0.0), 1e-9))
    d, u = down.get(worst.name, 0.0), up.get(worst.name, 0.0)
    return TierCapacity(name, len(devices), d, u, d / u if u else float("inf"), declared)


def _scope(
    name: str, instances: int, gpus: int, nic_gbps: float, cuts: list[tuple[str, float]], crosses: tuple[str, ...]
) -> ScopeCapacity:
    # Bisection = the smallest cut that halves the scope's GPUs: through the NICs themselves, or through a
    # tier's uplinks when traffic between the halves must climb over it.
    best = ("nic", gpus / 2 * nic_gbps)
    for cut in cuts:
        if cut[1] < best[1] - 1e-9:
            best = cut
    return ScopeCapacity(name, instances, gpus, best[1], best[0], crosses)
