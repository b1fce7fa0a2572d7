"""The Linux kernel's ECMP (the namespace lab's switches), so a lab run can be held against the model.

The lab sends elephant flows between hosts and reads per-uplink byte counters on the leaves; this module
predicts the split of those flows over a leaf's uplinks for a kernel hash policy (LAB.md):
0 L3 (addresses), 1 L4 (5-tuple), 2 L3 or inner L3, 3 custom (net.ipv4.fib_multipath_hash_fields bitmask).

What can be predicted exactly is which flows are *indistinguishable* to the hash (same hashed fields -> same
uplink, e.g. policy 0 puts all 16 flows between two hosts on one uplink). Which uplink a distinguishable flow
takes depends on the kernel's siphash key, which this model does not reproduce; so `predict_uplink_split`
gives one seeded sample, and `uplink_split_forecast` the distribution over hash seeds that a measured split
should fall in. The kernel picks a next hop by hash threshold (fib_select_multipath): the 31-bit hash is
compared with equal-weight upper bounds, i.e. member = hash * n / 2**31.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from netfab.analyze.hashing import (
    KERNEL_DEFAULT_FIELDS_MASK,
    ROCE_UDP_PORT,
    UDP_PROTOCOL,
    combine,
    kernel_hash_fields,
)
from netfab.analyze.routing import ip_to_int
from netfab.analyze.stats import Quantiles
from netfab.design.plan import FabricPlan
from netfab.intent.types import HashField

UplinkSplit = dict[str, dict[str, int]]
"""Source leaf -> {uplink interface -> flows}."""


@dataclass(frozen=True, slots=True)
class KernelFlow:
    """One elephant flow of a lab run, as the leaf's kernel sees its headers."""

    src_ip: str
    dst_ip: str
    src_port: int
    dst_port: int = ROCE_UDP_PORT
    protocol: int = UDP_PROTOCOL


@dataclass(frozen=True)
class SplitForecast:
    """What one leaf's uplink split should look like over hash seeds."""

    leaf: str
    uplinks: tuple[str, ...]
    flows: int
    distinct_keys: int
    """Flows the hash can tell apart; flows with equal hashed fields always share an uplink."""
    busiest: Quantiles
    p_all_on_one: float
    busiest_samples: np.ndarray

    def p_at_least(self, busiest_flows: int) -> float:
        """Probability that the busiest uplink carries at least this many flows (how surprising a measurement
        is: a lab split whose busiest count has p < 0.01 disagrees with the model)."""
        return float(np.mean(self.busiest_samples >= busiest_flows))


def predict_uplink_split(
    plan: FabricPlan,
    flows: Sequence[KernelFlow],
    policy: int,
    *,
    fields_mask: int = KERNEL_DEFAULT_FIELDS_MASK,
    seed: int | None = None,
) -> UplinkSplit:
    """Flows per uplink of each source leaf for the leaf -> spine hop.

    `seed` None uses each leaf's planned hash seed (what netfab writes to fib_multipath_hash_seed). Flows whose
    destination hangs off the same leaf never take an uplink and are left out.
    """
    by_leaf = _flows_by_leaf(plan, flows)
    fields = kernel_hash_fields(policy, fields_mask)
    out: UplinkSplit = {}
    for leaf, (uplinks, leaf_flows) in by_leaf.items():
        leaf_seed = plan.devices[leaf].hash_seed if seed is None else seed
        member = _members(leaf_flows, fields, np.array([leaf_seed], dtype=np.uint32), len(uplinks))[0]
        counts = np.bincount(member, minlength=len(uplinks))
        out[leaf] = {name: int(c) for name, c in zip(uplinks, counts, strict=True)}
    return out


def uplink_split_forecast(
    plan: FabricPlan,
    flows: Sequence[KernelFlow],
    policy: int,
    *,
    fields_mask: int = KERNEL_DEFAULT_FIELDS_MASK,
    trials: int = 2000,
    seed: int = 0,
) -> dict[str, SplitForecast]:
    """Per source leaf, the distribution of the busiest uplink's flow count over `trials` random hash seeds."""
    fields = kernel_hash_fields(policy, fields_mask)
    seeds = np.random.default_rng(seed).integers(0, 1 << 32, size=trials, dtype=np.uint64).astype(np.uint32)
    out: dict[str, SplitForecast] = {}
    for leaf, (uplinks, leaf_flows) in _flows_by_leaf(plan, flows).items():
        member = _members(leaf_flows, fields, seeds, len(uplinks))
        loads = np.zeros((trials, len(uplinks)), dtype=np.int64)
        np.add.at(loads, (np.repeat(np.arange(trials), member.shape[1]), member.ravel()), 1)
        busiest = loads.max(axis=1)
        keys = _field_keys(leaf_flows, fields, np.uint32(0))
        out[leaf] = SplitForecast(
            leaf=leaf,
            uplinks=tuple(uplinks),
            flows=len(leaf_flows),
            distinct_keys=int(np.unique(keys).size),
            busiest=Quantiles.of(busiest.astype(float)),
            p_all_on_one=float(np.mean(busiest == len(leaf_flows))),
            busiest_samples=busiest,
        )
    return out


def _flows_by_leaf(plan: FabricPlan, flows: Sequence[KernelFlow]) -> dict[str, tuple[list[str], list[KernelFlow]]]:
    leaf_of = {nic.address.split("/", 1)[0]: nic.leaf for s in plan.servers for nic in s.nics}
    grouped: dict[str, tuple[list[str], list[KernelFlow]]] = {}
    for flow in flows:
        try:
            src_leaf, dst_leaf = leaf_of[flow.src_ip], leaf_of[flow.dst_ip]
        except KeyError as exc:
            raise ValueError(f"{exc.args[0]} is not a GPU NIC address of fabric {plan.name}") from None
        if src_leaf == dst_leaf:
            continue
        if src_leaf not in grouped:
            ups = sorted(plan.devices[src_leaf].interfaces_by_role("fabric_up"), key=lambda i: i.port)
            grouped[src_leaf] = ([i.name for i in ups], [])
        grouped[src_leaf][1].append(flow)
    return grouped


def _field_keys(flows: Sequence[KernelFlow], fields: frozenset[str], seed: np.uint32) -> np.ndarray:
    values = {
        str(HashField.SRC_IP): [ip_to_int(f.src_ip) for f in flows],
        str(HashField.DST_IP): [ip_to_int(f.dst_ip) for f in flows],
        str(HashField.IP_PROTOCOL): [f.protocol for f in flows],
        str(HashField.SRC_PORT): [f.src_port for f in flows],
        str(HashField.DST_PORT): [f.dst_port for f in flows],
    }
    h = np.full(len(flows), seed, dtype=np.uint32)
    for name in sorted(fields & values.keys()):
        h = combine(h, np.array(values[name], dtype=np.uint32))
    return h


def _members(flows: Sequence[KernelFlow], fields: frozenset[str], seeds: np.ndarray, n: int) -> np.ndarray:
    """Uplink index per (seed, flow) by hash threshold over n equal-weight next hops."""
    keys = _field_keys(flows, fields, np.uint32(0))
    h = combine(keys[None, :], seeds[:, None]) >> np.uint32(1)
    return ((h.astype(np.uint64) * np.uint64(n)) >> np.uint64(31)).astype(np.int64)
