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
from itertools import chain, repeat
from operator import attrgetter

import numpy as np

from netfab.design.plan import FabricPlan, LinkPlan, NicPlan

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
    def of_owners(cls, owner: np.ndarray, groups: int) -> EcmpGroups:
        """Link i belongs to group owner[i]; each group lists its links in link order."""
        size = np.bincount(owner, minlength=groups).astype(np.int64)
        width = int(size.max(initial=0)) or 1
        members = np.zeros((groups, width), dtype=np.int64)
        by_group = np.argsort(owner, kind="stable")
        starts = np.cumsum(size) - size
        grouped = owner[by_group]
        members[grouped, np.arange(owner.size) - starts[grouped]] = by_group
        uniform = np.unique(size[size > 0])
        return cls(members, size, int(uniform[0]) if uniform.size == 1 else 0)


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
    nic_address: np.ndarray
    """[server, gpu] -> the NIC's address as the plan writes it ('10.0.0.1/31'), None where there is none."""
    nic_gbps: float

    @property
    def servers(self) -> int:
        return len(self.server_names)

    def nic_ips(self, nics: np.ndarray) -> np.ndarray:
        """IPv4 addresses (uint32; 0 where none) of NICs by id, server * gpus_per_server + gpu. Parsed for the
        NICs asked about only: a job reads a few hundred of a large fabric's ~100,000."""
        ids, inverse = np.unique(nics, return_inverse=True)
        flat = self.nic_address.ravel()
        values = np.array([0 if flat[i] is None else ip_to_int(flat[i]) for i in ids.tolist()], dtype=np.uint32)
        ips: np.ndarray = values[inverse].reshape(nics.shape)
        return ips

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
    """Index the plan. O(cables) Python once; everything after that is array arithmetic."""
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
    host: list[LinkPlan] = []
    for link in plan.links:
        if link.tier == "leaf_spine":
            ls_spine.append(spine_id[link.a_device])
            ls_leaf.append(leaf_id[link.b_device])
            ls_gbps.append(float(link.speed_gbps))
        elif link.tier == "spine_superspine":
            sss_ss.append(ss_id[link.a_device])
            sss_spine.append(spine_id[link.b_device])
            sss_gbps.append(float(link.speed_gbps))
        elif link.tier == "host":
            host.append(link)

    n_leaves, n_spines, n_ss = len(leaf_id), len(spine_id), len(ss_id)
    spine_pod = np.array([pod_of(n) for n in by_role["spine"]], dtype=np.int64)
    ls_leaf_a = np.array(ls_leaf, dtype=np.int64)
    ls_spine_a = np.array(ls_spine, dtype=np.int64)
    sss_spine_a = np.array(sss_spine, dtype=np.int64)
    sss_ss_a = np.array(sss_ss, dtype=np.int64)
    superspine_down = EcmpGroups.of_owners(sss_ss_a * pods + spine_pod[sss_spine_a], n_ss * pods)

    order = np.lexsort((ls_leaf_a, ls_spine_a)) if ls_leaf else np.zeros(0, dtype=np.int64)
    pair = ls_spine_a[order] * n_leaves + ls_leaf_a[order]
    bundle_start = np.zeros((n_spines, n_leaves), dtype=np.int64)
    bundle_size = np.zeros((n_spines, n_leaves), dtype=np.int64)
    if pair.size:
        keys, first, counts = np.unique(pair, return_index=True, return_counts=True)
        bundle_start.flat[keys] = first
        bundle_size.flat[keys] = counts

    leaf_pod = np.array([pod_of(n) for n in by_role["leaf"]], dtype=np.int64)
    _check_up_down(leaf_pod, spine_pod, bundle_size, superspine_down.size, n_ss, pods)

    names = [s.name for s in plan.servers]
    domain = np.array([(s.su or s.pod or 1) - 1 for s in plan.servers], dtype=np.int64)
    # NIC tables by whole-array scatter, not an element per NIC (a numpy scalar store is ~0.2 us, and a
    # 100k-GPU fabric has 98,304 NICs); addresses stay text until a job's flows ask for theirs (nic_ips).
    per_server = [server.nics[:gpus_per_server] for server in plan.servers]
    nics = list(chain.from_iterable(per_server))
    row = np.repeat(np.arange(len(per_server), dtype=np.int64), [len(n) for n in per_server])
    col = np.fromiter(map(attrgetter("index"), nics), dtype=np.int64, count=len(nics))
    nic_leaf = np.zeros((len(plan.servers), gpus_per_server), dtype=np.int64)
    nic_leaf[row, col] = np.fromiter(map(leaf_id.__getitem__, map(attrgetter("leaf"), nics)), np.int64, len(nics))
    nic_address = np.full((len(plan.servers), gpus_per_server), None, dtype=object)
    nic_address[row, col] = np.fromiter(map(attrgetter("address"), nics), dtype=object, count=len(nics))
    nic_gbps = _nic_gbps(host, nics)

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
        leaf_up=EcmpGroups.of_owners(ls_leaf_a, n_leaves),
        bundle_links=order.astype(np.int64),
        bundle_start=bundle_start,
        bundle_size=bundle_size,
        sss_spine=sss_spine_a,
        sss_superspine=sss_ss_a,
        sss_gbps=np.array(sss_gbps, dtype=np.float64),
        spine_up=EcmpGroups.of_owners(sss_spine_a, n_spines),
        superspine_down=superspine_down,
        server_names=tuple(names),
        server_domain=domain,
        nic_leaf=nic_leaf,
        nic_address=nic_address,
        nic_gbps=nic_gbps,
    )


def _nic_gbps(host: list[LinkPlan], nics: list[NicPlan]) -> float:
    """The fastest host cable any of the NICs is on (0 when none is)."""
    speeds = set(map(attrgetter("speed_gbps"), host))
    if len(speeds) == 1 and nics:
        # Every host cable at one speed (as netfab designs them): that speed as soon as one NIC is on one. Saves
        # a (device, port) lookup per NIC, ~0.09 s at 100k GPUs.
        first = nics[0]
        if any(lk.a_port == first.leaf_port and lk.a_device == first.leaf for lk in host):
            return float(speeds.pop())
    speed_of = {(lk.a_device, lk.a_port): lk.speed_gbps for lk in host}
    return float(max(map(speed_of.get, map(attrgetter("leaf", "leaf_port"), nics), repeat(0)), default=0))


def _check_up_down(
    leaf_pod: np.ndarray,
    spine_pod: np.ndarray,
    bundle_size: np.ndarray,
    superspine_down_size: np.ndarray,
    n_ss: int,
    pods: int,
) -> None:
    # The model sends a flow up to any spine of its leaf and expects that spine to reach the destination leaf
    # (same pod) or some superspine's links into the destination pod. A design where that fails would need
    # per-destination next-hop sets; say so instead of silently dropping flows.
    same_pod = spine_pod[:, None] == leaf_pod[None, :]
    if np.any(same_pod & (bundle_size == 0)):
        raise RoutingModelError("a leaf is not connected to every spine of its pod; the up-down model needs that")
    reaches = superspine_down_size.reshape(n_ss, pods) > 0
    if pods > 1 and np.any(reaches.any(axis=1) & ~reaches.all(axis=1)):
        raise RoutingModelError("a superspine does not reach every pod; the up-down model needs that")
