"""The fabric plan as ECMP next-hop tables: what each switch can choose between, as numpy arrays.

The ECMP model routes thousands of flows over thousands of trials, so it cannot walk DevicePlan objects per
flow. This module reads the plan once and keeps only what routing needs: per leaf its uplinks, per spine its
uplinks and the bundle of parallel links down to each leaf, per superspine the links down into each pod, and
each switch's hash seed. Directed links are numbered per tier; a physical leaf-spine link is index i in both
the `leaf_up` and the `spine_down` tier (one per direction).

Routing is the fabric's up-down shortest path: leaf -> spine -> (superspine -> spine in the destination pod)
-> leaf. That is what eBGP with multipath installs in both styles netfab designs.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from netfab.design.plan import FabricPlan

LINK_TIERS: tuple[str, ...] = ("host_up", "host_down", "leaf_up", "spine_down", "spine_up", "superspine_down")
"""Directed link tiers, in path order. host_up = NIC -> leaf, host_down = leaf -> NIC."""


class RoutingModelError(ValueError):
    """The plan has a shape the up-down model cannot route (e.g. a leaf that misses a spine of its pod)."""


def ip_to_int(address: str) -> int:
    """'10.64.0.1/31' -> 0x0A400001."""
    value: int = struct.unpack("!I", socket.inet_aton(address.split("/", 1)[0]))[0]
    return value


@dataclass(frozen=True, slots=True)
class EcmpGroups:
    """A padded next-hop table: group g chooses among members[g, :size[g]] (link ids)."""

    members: np.ndarray
    size: np.ndarray
    uniform: int
    """The one size every non-empty group has, or 0: a scalar modulus is much faster than a per-flow one."""

    @classmethod
    def build(cls, groups: list[list[int]]) -> EcmpGroups:
        width = max((len(g) for g in groups), default=1) or 1
        members = np.zeros((len(groups), width), dtype=np.int64)
        size = np.zeros(len(groups), dtype=np.int64)
        for i, g in enumerate(groups):
            members[i, : len(g)] = g
            size[i] = len(g)
        sizes = set(size[size > 0].tolist())
        return cls(members, size, sizes.pop() if len(sizes) == 1 else 0)


@dataclass(frozen=True)
class FabricRoutes:
    """ECMP tables of one fabric plan. Indices: leaves, spines, superspines in design order."""

    fabric: str
    style: str
    gpus_per_server: int
    leaf_names: tuple[str, ...]
    leaf_pod: np.ndarray
    leaf_seed: np.ndarray
    spine_pod: np.ndarray
    spine_seed: np.ndarray
    superspine_seed: np.ndarray
    pods: int
    # leaf <-> spine physical links (tiers leaf_up / spine_down)
    ls_leaf: np.ndarray
    ls_spine: np.ndarray
    ls_gbps: np.ndarray
    leaf_up: EcmpGroups
    """Group per leaf: its uplinks."""
    bundle_links: np.ndarray
    """ls link ids sorted by (spine, leaf): a spine's parallel links to one leaf are contiguous."""
    bundle_start: np.ndarray
    bundle_size: np.ndarray
    """[spine, leaf] -> position in bundle_links and count (0 = not connected)."""
    # spine <-> superspine physical links (tiers spine_up / superspine_down)
    sss_spine: np.ndarray
    sss_superspine: np.ndarray
    sss_gbps: np.ndarray
    spine_up: EcmpGroups
    """Group per spine: its uplinks."""
    superspine_down: EcmpGroups
    """Group per (superspine * pods + pod): its links down to that pod's spines."""
    # servers and NICs
    server_names: tuple[str, ...]
    server_domain: np.ndarray
    """Scalable unit (rail_optimized) or pod (clos3) of each server, 0-based: what 'spread' placement spreads over."""
    nic_leaf: np.ndarray
    """[server, gpu] -> leaf index."""
    nic_ip: np.ndarray
    """[server, gpu] -> IPv4 address as an integer (uint32)."""
    nic_gbps: float

    @property
    def servers(self) -> int:
        return len(self.server_names)

    @cached_property
    def tier_sizes(self) -> dict[str, int]:
        nics = self.nic_leaf.size
        return {
            "host_up": nics,
            "host_down": nics,
            "leaf_up": self.ls_leaf.size,
            "spine_down": self.ls_leaf.size,
            "spine_up": self.sss_spine.size,
            "superspine_down": self.sss_spine.size,
        }

    def tier_gbps(self, tier: str) -> np.ndarray:
        """Capacity of every directed link of a tier."""
        if tier in ("host_up", "host_down"):
            return np.full(self.nic_leaf.size, self.nic_gbps)
        if tier in ("leaf_up", "spine_down"):
            return self.ls_gbps
        return self.sss_gbps


def build_routes(plan: FabricPlan, gpus_per_server: int) -> FabricRoutes:
    """Index the plan. O(links) Python once; everything after that is array arithmetic."""
    by_role: dict[str, list[str]] = {"leaf": [], "spine": [], "superspine": []}
    for dev in sorted(plan.devices.values(), key=lambda d: (d.role, d.index)):
        by_role[dev.role].append(dev.name)
    leaf_id = {n: i for i, n in enumerate(by_role["leaf"])}
    spine_id = {n: i for i, n in enumerate(by_role["spine"])}
    ss_id = {n: i for i, n in enumerate(by_role["superspine"])}
    devices = plan.devices

    def pod_of(name: str) -> int:
        pod = devices[name].pod
        return pod - 1 if pod is not None else 0

    def seeds(names: list[str]) -> np.ndarray:
        return np.array([devices[n].hash_seed & 0xFFFFFFFF for n in names], dtype=np.uint32)

    pods = max([pod_of(n) + 1 for n in by_role["leaf"]] or [1])

    ls_leaf: list[int] = []
    ls_spine: list[int] = []
    ls_gbps: list[float] = []
    sss_spine: list[int] = []
    sss_ss: list[int] = []
    sss_gbps: list[float] = []
    for link in plan.links:
        if link.tier == "leaf_spine":
            ls_spine.append(spine_id[link.a_device])
            ls_leaf.append(leaf_id[link.b_device])
            ls_gbps.append(float(link.speed_gbps))
        elif link.tier == "spine_superspine":
            sss_ss.append(ss_id[link.a_device])
            sss_spine.append(spine_id[link.b_device])
            sss_gbps.append(float(link.speed_gbps))

    n_leaves, n_spines, n_ss = len(leaf_id), len(spine_id), len(ss_id)
    leaf_groups: list[list[int]] = [[] for _ in range(n_leaves)]
    for i, leaf in enumerate(ls_leaf):
        leaf_groups[leaf].append(i)
    spine_groups: list[list[int]] = [[] for _ in range(n_spines)]
    ss_groups: list[list[int]] = [[] for _ in range(n_ss * pods)]
    spine_pod = np.array([pod_of(n) for n in by_role["spine"]], dtype=np.int64)
    for i, (spine, ss) in enumerate(zip(sss_spine, sss_ss, strict=True)):
        spine_groups[spine].append(i)
        ss_groups[ss * pods + int(spine_pod[spine])].append(i)

    ls_leaf_a = np.array(ls_leaf, dtype=np.int64)
    ls_spine_a = np.array(ls_spine, dtype=np.int64)
    order = np.lexsort((ls_leaf_a, ls_spine_a)) if ls_leaf else np.zeros(0, dtype=np.int64)
    pair = ls_spine_a[order] * n_leaves + ls_leaf_a[order]
    bundle_start = np.zeros((n_spines, n_leaves), dtype=np.int64)
    bundle_size = np.zeros((n_spines, n_leaves), dtype=np.int64)
    if pair.size:
        keys, first, counts = np.unique(pair, return_index=True, return_counts=True)
        bundle_start.flat[keys] = first
        bundle_size.flat[keys] = counts

    leaf_pod = np.array([pod_of(n) for n in by_role["leaf"]], dtype=np.int64)
    _check_up_down(leaf_pod, spine_pod, bundle_size, ss_groups, n_ss, pods)

    names = [s.name for s in plan.servers]
    nic_leaf = np.zeros((len(plan.servers), gpus_per_server), dtype=np.int64)
    nic_ip = np.zeros((len(plan.servers), gpus_per_server), dtype=np.uint32)
    domain = np.zeros(len(plan.servers), dtype=np.int64)
    nic_gbps = 0.0
    host_speed = {(lk.a_device, lk.a_port): lk.speed_gbps for lk in plan.links if lk.tier == "host"}
    for s, server in enumerate(plan.servers):
        domain[s] = (server.su or server.pod or 1) - 1
        for nic in server.nics[:gpus_per_server]:
            nic_leaf[s, nic.index] = leaf_id[nic.leaf]
            nic_ip[s, nic.index] = ip_to_int(nic.address)
            nic_gbps = max(nic_gbps, float(host_speed.get((nic.leaf, nic.leaf_port), 0)))

    return FabricRoutes(
        fabric=plan.name,
        style=plan.style,
        gpus_per_server=gpus_per_server,
        leaf_names=tuple(by_role["leaf"]),
        leaf_pod=leaf_pod,
        leaf_seed=seeds(by_role["leaf"]),
        spine_pod=spine_pod,
        spine_seed=seeds(by_role["spine"]),
        superspine_seed=seeds(by_role["superspine"]),
        pods=pods,
        ls_leaf=ls_leaf_a,
        ls_spine=ls_spine_a,
        ls_gbps=np.array(ls_gbps, dtype=np.float64),
        leaf_up=EcmpGroups.build(leaf_groups),
        bundle_links=order.astype(np.int64),
        bundle_start=bundle_start,
        bundle_size=bundle_size,
        sss_spine=np.array(sss_spine, dtype=np.int64),
        sss_superspine=np.array(sss_ss, dtype=np.int64),
        sss_gbps=np.array(sss_gbps, dtype=np.float64),
        spine_up=EcmpGroups.build(spine_groups),
        superspine_down=EcmpGroups.build(ss_groups),
        server_names=tuple(names),
        server_domain=domain,
        nic_leaf=nic_leaf,
        nic_ip=nic_ip,
        nic_gbps=nic_gbps,
    )


def _check_up_down(
    leaf_pod: np.ndarray,
    spine_pod: np.ndarray,
    bundle_size: np.ndarray,
    ss_groups: list[list[int]],
    n_ss: int,
    pods: int,
) -> None:
    # The model sends a flow up to any spine of its leaf and expects that spine to reach the destination leaf
    # (same pod) or some superspine's links into the destination pod. A design where that fails would need
    # per-destination next-hop sets; say so instead of silently dropping flows.
    same_pod = spine_pod[:, None] == leaf_pod[None, :]
    if np.any(same_pod & (bundle_size == 0)):
        raise RoutingModelError("a leaf is not connected to every spine of its pod; the up-down model needs that")
    if pods > 1:
        for ss in range(n_ss):
            if any(ss_groups[ss * pods + p] for p in range(pods)) and not all(
                ss_groups[ss * pods + p] for p in range(pods)
            ):
                raise RoutingModelError("a superspine does not reach every pod; the up-down model needs that")
