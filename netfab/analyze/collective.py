"""Where a job lands and which GPU talks to which: the scale-out traffic of one collective step.

Placement picks whole servers (schedulers allocate nodes); ranks follow host-name order, as a launcher's
sorted host list gives them. Every pattern is rail-aligned: GPU g of one server talks to GPU g of another
(NCCL rings and trees are built per NIC, and PXN moves all-to-all data onto the destination's rail inside the
server first), so traffic between GPUs of one server never touches the network.

Patterns, per step of the collective (all flows carry the same number of bytes):
- ring: rank r sends to rank r+1 (mod n) on every rail;
- tree: NCCL's double binary tree: two complementary binary trees, every tree edge used in both directions
  (reduce up, broadcast down), each tree carrying half of the data;
- alltoall: every rank sends to every other rank on every rail.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Literal

import numpy as np

from netfab.analyze.routing import FabricRoutes

Pattern = Literal["ring", "tree", "alltoall"]
Placement = Literal["spread", "packed", "random"]
PATTERNS: tuple[Pattern, ...] = ("ring", "tree", "alltoall")
PLACEMENTS: tuple[Placement, ...] = ("spread", "packed", "random")


@dataclass(frozen=True, slots=True)
class Job:
    servers: np.ndarray
    """Server indices in rank order."""
    gpus_per_server: int
    placement: Placement

    @property
    def gpus(self) -> int:
        return int(self.servers.size) * self.gpus_per_server


@dataclass(frozen=True, slots=True)
class GpuPairs:
    """Ordered (source NIC, destination NIC) pairs of one collective step; QPs are added by the ECMP model."""

    src_server: np.ndarray
    dst_server: np.ndarray
    gpu: np.ndarray
    """Rail-aligned: the same GPU/NIC index on both ends."""

    @property
    def count(self) -> int:
        return int(self.gpu.size)


def place_job(routes: FabricRoutes, job_gpus: int, placement: Placement, seed: int) -> Job:
    """Choose ceil(job_gpus / gpus_per_server) servers.

    spread: evenly over scalable units (rail_optimized) or pods (clos3), and evenly over each one's servers,
    which is what a scheduler filling a fragmented cluster does; packed: the first servers in design order;
    random: a seeded uniform choice.
    """
    per = routes.gpus_per_server
    n = ceil(job_gpus / per)
    total = routes.servers
    if n > total:
        raise ValueError(f"a {job_gpus}-GPU job needs {n} servers; the fabric has {total}")
    if placement == "packed":
        chosen = np.arange(n)
    elif placement == "random":
        chosen = np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))
    else:
        chosen = _spread(routes.server_domain, n)
    return Job(servers=chosen.astype(np.int64), gpus_per_server=per, placement=placement)


def _spread(domain: np.ndarray, n: int) -> np.ndarray:
    domains = [np.flatnonzero(domain == d) for d in np.unique(domain)]
    # Give each domain its share (the first ones take the remainder), then take evenly spaced servers in it.
    base, extra = divmod(n, len(domains))
    picked: list[np.ndarray] = []
    for i, members in enumerate(domains):
        k = min(base + (1 if i < extra else 0), members.size)
        if k:
            picked.append(members[(np.arange(k) * members.size) // k])
    chosen = np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)
    if chosen.size < n:  # uneven domains: top up with the first servers not yet used
        rest = np.setdiff1d(np.arange(domain.size), chosen)[: n - chosen.size]
        chosen = np.sort(np.concatenate([chosen, rest]))
    return chosen


def gpu_pairs(job: Job, pattern: Pattern) -> GpuPairs:
    ranks = job.servers
    n = ranks.size
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return GpuPairs(empty, empty, empty)
    if pattern == "ring":
        src = np.arange(n)
        dst = (src + 1) % n
    elif pattern == "tree":
        src, dst = _double_binary_tree(n)
    else:
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
    g = job.gpus_per_server
    # One pair per rail: repeat each server pair for every GPU index.
    return GpuPairs(
        src_server=np.repeat(ranks[src], g),
        dst_server=np.repeat(ranks[dst], g),
        gpu=np.tile(np.arange(g), src.size),
    )


def _double_binary_tree(n: int) -> tuple[np.ndarray, np.ndarray]:
    # Tree A: heap order over ranks (parent of i is (i-1)//2). Tree B: the same shape over mirrored ranks,
    # so a rank that is a leaf in one tree is interior in the other and every rank's links carry about the
    # same traffic - the property NCCL's double binary tree is built for.
    child = np.arange(1, n)
    parent = (child - 1) // 2
    a_src = np.concatenate([child, parent])
    a_dst = np.concatenate([parent, child])
    mirror = n - 1
    return np.concatenate([a_src, mirror - a_src]), np.concatenate([a_dst, mirror - a_dst])
