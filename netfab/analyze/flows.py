"""The job's flows as routing sees them, and their ideal load: the fair share every link would carry if each
ECMP group split its flows perfectly evenly (what packet spraying achieves, and adaptive routing aims for).

The ideal is computed once per job by pushing fractional flows through the same next-hop tables the trials
use, aggregated per (switch, destination leaf), so its cost grows with distinct destinations, not flows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netfab.analyze.collective import GpuPairs
from netfab.analyze.routing import LINK_TIERS, FabricRoutes


@dataclass(frozen=True)
class FlowSet:
    """GPU pairs that leave their leaf, with everything routing needs per pair."""

    pairs: GpuPairs
    src_nic: np.ndarray
    dst_nic: np.ndarray
    src_leaf: np.ndarray
    dst_leaf: np.ndarray
    dst_pod: np.ndarray
    src_ip: np.ndarray
    dst_ip: np.ndarray
    intra: np.ndarray
    """Indices of fabric pairs whose destination is in the source's pod (leaf -> spine -> leaf)."""
    cross: np.ndarray
    """Indices of fabric pairs that cross pods (leaf -> spine -> superspine -> spine -> leaf)."""

    @property
    def count(self) -> int:
        return int(self.src_nic.size)


def flow_set(routes: FabricRoutes, pairs: GpuPairs) -> FlowSet:
    g = routes.gpus_per_server
    src_nic = pairs.src_server * g + pairs.gpu
    dst_nic = pairs.dst_server * g + pairs.gpu
    src_leaf = routes.nic_leaf.ravel()[src_nic]
    dst_leaf = routes.nic_leaf.ravel()[dst_nic]
    fabric = np.flatnonzero(src_leaf != dst_leaf)
    same_pod = routes.leaf_pod[src_leaf] == routes.leaf_pod[dst_leaf]
    return FlowSet(
        pairs=pairs,
        src_nic=src_nic,
        dst_nic=dst_nic,
        src_leaf=src_leaf,
        dst_leaf=dst_leaf,
        dst_pod=routes.leaf_pod[dst_leaf],
        src_ip=routes.nic_ips(src_nic),
        dst_ip=routes.nic_ips(dst_nic),
        intra=fabric[same_pod[fabric]],
        cross=fabric[~same_pod[fabric]],
    )


def ideal_loads(routes: FabricRoutes, flows: FlowSet) -> dict[str, np.ndarray]:
    """Expected flows per directed link with one QP per pair, if every ECMP group split evenly."""
    sizes = routes.tier_sizes
    loads = {t: np.zeros(sizes[t]) for t in LINK_TIERS}
    loads["host_up"] += np.bincount(flows.src_nic, minlength=sizes["host_up"])
    loads["host_down"] += np.bincount(flows.dst_nic, minlength=sizes["host_down"])
    fabric = np.concatenate([flows.intra, flows.cross])
    if fabric.size == 0:
        return loads
    n_leaves = len(routes.leaf_names)
    leaf, dst, w = aggregate_weights(flows.src_leaf[fabric], flows.dst_leaf[fabric], np.ones(fabric.size), n_leaves)
    links, rows = expand_groups(routes.leaf_up.members, routes.leaf_up.size, leaf)
    w = w[rows] / routes.leaf_up.size[leaf][rows]
    dst = dst[rows]
    loads["leaf_up"] += np.bincount(links, weights=w, minlength=sizes["leaf_up"])
    spine = routes.ls_spine[links]
    here = routes.spine_pod[spine] == routes.leaf_pod[dst]
    down_spine, down_dst, down_w = [spine[here]], [dst[here]], [w[here]]
    if not np.all(here):
        s, d, sw = aggregate_weights(spine[~here], dst[~here], w[~here], n_leaves)
        links, rows = expand_groups(routes.spine_up.members, routes.spine_up.size, s)
        sw = sw[rows] / routes.spine_up.size[s][rows]
        d = d[rows]
        loads["spine_up"] += np.bincount(links, weights=sw, minlength=sizes["spine_up"])
        ss, d, sw = aggregate_weights(routes.sss_superspine[links], d, sw, n_leaves)
        group = ss * routes.pods + routes.leaf_pod[d]
        links, rows = expand_groups(routes.superspine_down.members, routes.superspine_down.size, group)
        sw = sw[rows] / routes.superspine_down.size[group][rows]
        loads["superspine_down"] += np.bincount(links, weights=sw, minlength=sizes["superspine_down"])
        down_spine.append(routes.sss_spine[links])
        down_dst.append(d[rows])
        down_w.append(sw)
    s, d, sw = aggregate_weights(np.concatenate(down_spine), np.concatenate(down_dst), np.concatenate(down_w), n_leaves)
    start = routes.bundle_start[s, d]
    size = routes.bundle_size[s, d]
    rows = np.repeat(np.arange(s.size), size)
    offset = np.arange(rows.size) - np.repeat(np.cumsum(size) - size, size)
    links = routes.bundle_links[start[rows] + offset]
    loads["spine_down"] += np.bincount(links, weights=sw[rows] / size[rows], minlength=sizes["spine_down"])
    return loads


def aggregate_weights(a: np.ndarray, b: np.ndarray, w: np.ndarray, b_range: int) -> tuple[np.ndarray, ...]:
    """Sum weights per (a, b): keeps the fan-out of the next stage proportional to distinct states."""
    keys, inverse = np.unique(a * b_range + b, return_inverse=True)
    return keys // b_range, keys % b_range, np.bincount(inverse, weights=w)


def expand_groups(members: np.ndarray, size: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every member link of each row's group, and the row it came from."""
    counts = size[group]
    rows = np.repeat(np.arange(group.size), counts)
    offset = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return members[group[rows], offset], rows
