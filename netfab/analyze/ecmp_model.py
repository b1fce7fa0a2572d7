"""ECMP collision model: how unevenly hashing spreads a collective's flows, and what that does to step time.

A collective is a barrier, so the figure that matters is the slowest flow. Every flow of one step carries the
same bytes S; k flows sharing a link of capacity C each get C/k, and the link needs k*S/C to drain, so the
step takes max over links of k_l * S / C_l. Perfect balance (packet spraying, or adaptive routing at its
best) puts the fractional fair share on every link of an ECMP group; the *step-time tax* of a trial is its
step time over that ideal, minus one. Host links carry the same load in both, so a fabric whose collisions
stay below the NIC's own load pays no tax.

One trial = one draw of every QP's UDP source port and destination QP number (what the NIC picks when the
collective opens its connections), routed hop by hop with each switch's own seed. The job's placement is
fixed (see collective.py); the trials vary what hashing does with it. All scenarios see the same random
draws per trial (common random numbers), so their differences are the configuration's, not noise.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from netfab.analyze.ecmp_aggregate import CELLS_PER_DRAW, TierClasses, draw_loads, independent_hops, tier_classes
from netfab.analyze.flows import FlowSet, ideal_loads
from netfab.analyze.hashing import DEST_QP, FIVE_TUPLE, ROCE_SPORT_BASE, SportMode, flow_key, has_qp_entropy, next_hop
from netfab.analyze.hashing import pair_key as hash_pair_key
from netfab.analyze.routing import EcmpGroups, FabricRoutes
from netfab.analyze.stats import Quantiles
from netfab.intent.types import HashField

FABRIC_TIERS: tuple[str, ...] = ("leaf_up", "spine_down", "spine_up", "superspine_down")
CHUNK_ELEMENTS = 1 << 19
"""Flow-trials per vectorised step: big enough to amortise numpy call overhead, small enough for the cache."""
PER_FLOW_BUDGET = 20_000_000
"""Flow-trials (about a second of hashing) above which a scenario whose QPs all carry entropy is drawn per
flow class instead (ecmp_aggregate.py): only an all-to-all of a big job gets there (n^2 x rails x QPs flows
per trial)."""
WORK_BUDGET = 200_000_000
"""Flow-trials per scenario before trials are cut, for the scenarios the aggregated draw cannot stand for
(hops that share a seed polarise, which only per-flow hashing shows). The report states the trials each
scenario actually ran."""

Method = Literal["per_flow", "aggregated"]


@dataclass(frozen=True, slots=True)
class Scenario:
    key: str
    label: str
    hash_fields: frozenset[str]
    qps: int
    sport: SportMode = "per_qp"
    ideal: bool = False
    """Adaptive routing / packet spraying: every link carries exactly its fair share."""

    @property
    def qp_entropy(self) -> bool:
        return self.ideal or has_qp_entropy(self.hash_fields, self.sport)

    def same_model(self, other: Scenario) -> bool:
        if self.ideal or other.ideal:
            return self.ideal == other.ideal and self.qps == other.qps
        return (self.hash_fields, self.qps, self.qp_entropy) == (other.hash_fields, other.qps, other.qp_entropy)


def comparison_scenarios(intent_scenario: Scenario) -> list[Scenario]:
    """The intent's own load balancing, then the comparisons the tail argument needs (duplicates dropped)."""
    with_qp = FIVE_TUPLE | {DEST_QP}
    candidates = [
        intent_scenario,
        Scenario("qp1_5tuple", "1 QP per GPU pair, 5-tuple hash", FIVE_TUPLE, 1),
        Scenario("qp16_5tuple", "16 QPs, 5-tuple hash", FIVE_TUPLE, 16),
        Scenario("qp16_5tuple_destqp", "16 QPs, 5-tuple + BTH dest QP", with_qp, 16),
        Scenario(
            "qp16_5tuple_fixed_sport", "16 QPs, 5-tuple, NIC with one fixed UDP source port", FIVE_TUPLE, 16, "fixed"
        ),
        Scenario("qp16_spraying", "16 QPs, adaptive routing / packet spraying (ideal)", with_qp, 16, ideal=True),
    ]
    out: list[Scenario] = []
    for s in candidates:
        if not any(s.same_model(o) for o in out):
            out.append(s)
    return out


@dataclass
class TierResult:
    tier: str
    links: int
    """Links of the tier the job's flows can use."""
    fair_share_max: float
    """The largest fair share (flows) on any of those links."""
    busiest_flows: Quantiles
    busiest_vs_fair: Quantiles
    """The busiest link's load over its own fair share."""
    busiest_samples: np.ndarray = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "links": self.links,
            "fair_share_max_flows": round(self.fair_share_max, 3),
            "busiest_link_flows": self.busiest_flows.as_dict(),
            "busiest_link_vs_fair_share": self.busiest_vs_fair.as_dict(),
        }


@dataclass
class ScenarioResult:
    scenario: Scenario
    trials: int
    deterministic: bool
    """No per-QP entropy reaches the hash: every trial routes identically."""
    ideal_step: float
    tax: Quantiles
    tiers: dict[str, TierResult]
    tax_samples: np.ndarray = field(repr=False)
    method: Method = "per_flow"
    """per_flow: every QP hashed at every hop; aggregated: flows per link drawn per flow class."""

    def as_dict(self) -> dict[str, Any]:
        s = self.scenario
        return {
            "model": self.method,
            "key": s.key,
            "label": s.label,
            "hash_fields": sorted(s.hash_fields),
            "qps_per_gpu_pair": s.qps,
            "nic_udp_source_port": s.sport,
            "ideal_balance": s.ideal,
            "trials": self.trials,
            "deterministic": self.deterministic,
            "step_time_tax": self.tax.as_dict(),
            "tiers": {t: r.as_dict() for t, r in self.tiers.items()},
        }


@dataclass(frozen=True)
class _Tier:
    """Counting constants of one tier: the links the job can touch (slots), their fair share and capacity."""

    slot: np.ndarray
    """Directed link id -> slot (-1 = the job can never use it)."""
    fair1: np.ndarray
    """Fair share per slot with one QP per pair."""
    inv_gbps: np.ndarray
    uniform_inv_gbps: float
    """1/capacity when every used link has the same speed (then the busiest link is also the slowest)."""

    @property
    def width(self) -> int:
        return int(self.fair1.size)


@dataclass(frozen=True)
class _PairPaths:
    """Per fabric pair (intra-pod pairs first) and per member m of its leaf's uplink group: where the flow goes.

    The first hop and, for intra-pod pairs, the whole path are table lookups indexed by pair * width + m;
    only cross-pod flows walk the remaining hops per trial.
    """

    width: int
    leaf_up_slot: np.ndarray
    spine: np.ndarray
    down_start: np.ndarray
    """Intra-pod pairs: position of the spine -> destination leaf bundle in bundle_links."""
    down_size: np.ndarray
    down_slot: np.ndarray | None
    """Intra-pod pairs when every bundle is one link: the spine_down slot, no further lookups."""
    src_leaf: np.ndarray
    dst_leaf: np.ndarray
    dst_pod: np.ndarray
    intra: int
    cross_hops: _CrossHops | None = None
    """Cross-pod pairs: the hops after the first, composed into per-choice tables."""


@dataclass(frozen=True)
class _CrossHops:
    """The cross-pod hops as tables indexed by the ECMP choice (a position in the group's padded member table):
    one lookup per flow and hop where link id -> slot, link -> next switch and bundle lookups were several.

    Built once per model; each entry is the composition the per-trial code used to evaluate, so the counts
    are the same.
    """

    up_slot: np.ndarray
    """spine_up choice -> spine_up slot."""
    up_superspine: np.ndarray
    """spine_up choice -> the superspine at the far end."""
    down_slot: np.ndarray
    """superspine_down choice -> superspine_down slot."""
    down_spine: np.ndarray
    """superspine_down choice -> the spine at the far end (in the destination pod)."""
    leaf_slot: np.ndarray | None
    """[spine * destinations + destination] -> spine_down slot, when every such bundle is one link (else None:
    the bundle is hashed per flow)."""
    destination: np.ndarray
    """Per cross-pod pair, its destination leaf's column in leaf_slot."""
    destinations: int
    spine_seed: np.ndarray
    """Per pair and leaf uplink member (pair * width + m, as member in _route): the spine's seed."""
    spine_group: np.ndarray
    """The same index -> the first position of that spine's uplink group in spine_up.members.ravel()."""
    up_seed: np.ndarray
    """spine_up choice -> the seed of the superspine at the far end."""
    up_group: np.ndarray
    """spine_up choice -> the first position of that superspine's downlink group to pod 0."""
    pod_offset: np.ndarray
    """Per cross-pod flow column (pairs x QPs): its destination pod's offset from the pod-0 group."""


class EcmpModel:
    """Routes one job's flows through the fabric's ECMP tables, trial after trial."""

    def __init__(self, routes: FabricRoutes, flows: FlowSet, seed: int, max_qps: int) -> None:
        self.routes = routes
        self.flows = flows
        self.seed = seed
        self.max_qps = max_qps
        self.ideal1 = ideal_loads(routes, flows)
        # Intra-pod pairs first, then cross-pod: both become contiguous column ranges of the key matrix.
        self.order = np.concatenate([flows.intra, flows.cross])
        self.tiers = {t: self._tier(t) for t in FABRIC_TIERS}
        self.tiers = {t: v for t, v in self.tiers.items() if v.width}
        self.paths = self._pair_paths()
        # The chunk layout depends only on the largest QP count, so every scenario sees the same draws.
        self.chunk = max(1, CHUNK_ELEMENTS // max(1, self.order.size * max_qps))
        self.independent = independent_hops(routes)
        self._classes: dict[str, TierClasses] | None = None
        self._aggregated: dict[tuple[int, int], tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]] = {}
        self._lock = threading.Lock()
        self._locks: dict[int, threading.Lock] = {}

    def run(self, scenario: Scenario, trials: int) -> ScenarioResult:
        q = scenario.qps
        host_step = max(
            (float((self.ideal1[t] * q / self.routes.tier_gbps(t)).max()) for t in ("host_up", "host_down")),
            default=0.0,
        )
        ideal_step = max([host_step] + [float((v.fair1 * q * v.inv_gbps).max()) for v in self.tiers.values()])
        if scenario.ideal or not self.tiers:
            return self._ideal_result(scenario, trials, ideal_step)
        deterministic = not scenario.qp_entropy
        if not deterministic and self.independent and self.order.size * q * trials > PER_FLOW_BUDGET:
            return self._aggregated_result(scenario, trials, host_step, ideal_step)
        budget = max(1, WORK_BUDGET // max(self.order.size * q, 1))
        run_trials = 1 if deterministic else min(trials, budget)
        # Without per-QP entropy every QP of a pair hashes alike: route each pair once and count it q times.
        copies = 1 if deterministic else q
        weight = q // copies
        busiest = {t: np.zeros(run_trials) for t in self.tiers}
        vs_fair = {t: np.zeros(run_trials) for t in self.tiers}
        step = np.full(run_trials, host_step)
        f = self.flows
        pair_key = hash_pair_key(scenario.hash_fields, f.src_ip[self.order], f.dst_ip[self.order])
        base = np.repeat(np.arange(self.order.size) * self.paths.width, copies)
        leaf_seed = np.repeat(self.routes.leaf_seed[self.paths.src_leaf], copies)
        modulus = self.routes.leaf_up.uniform or np.repeat(self.routes.leaf_up.size[self.paths.src_leaf], copies)
        for first in range(0, run_trials, self.chunk):
            n = min(self.chunk, run_trials - first)
            sport, dest_qp = self._draws(first // self.chunk, n, copies, scenario)
            shape = (n, pair_key.size, copies)
            keys = flow_key(scenario.hash_fields, pair_key[None, :, None], shape, sport, dest_qp)
            keys = keys.reshape(n, -1)
            member = next_hop(keys, leaf_seed, modulus)
            member += base
            slots = self._route(keys, member, copies)
            rows = np.arange(n)
            window = slice(first, first + n)
            for t, v in self.tiers.items():
                index = slots[t]
                index += (rows * v.width)[:, None]
                loads = np.bincount(index.ravel(), minlength=n * v.width).reshape(n, v.width)
                if weight > 1:
                    loads *= weight
                _tally(v, loads, q, busiest[t][window], vs_fair[t][window], step[window])
        if deterministic:
            busiest = {t: np.repeat(a, trials) for t, a in busiest.items()}
            vs_fair = {t: np.repeat(a, trials) for t, a in vs_fair.items()}
            step = np.repeat(step, trials)
        return self._result(scenario, busiest, vs_fair, step, ideal_step, deterministic, "per_flow")

    def _aggregated_result(
        self, scenario: Scenario, trials: int, host_step: float, ideal_step: float
    ) -> ScenarioResult:
        q = scenario.qps
        # Scenarios with the same QP count have the same distribution here (each QP's choice is uniform
        # whichever fields carry its entropy), so they share one set of draws: common random numbers, and
        # their difference is exactly zero, as it should be.
        with self._lock:
            lock = self._locks.setdefault(q, threading.Lock())
            if self._classes is None:
                slots = {t: v.slot for t, v in self.tiers.items()}
                self._classes = tier_classes(self.routes, self.flows, self.order, slots)
        with lock:  # per QP count, so scenarios with different counts still draw in parallel
            if (q, trials) not in self._aggregated:
                self._aggregated[(q, trials)] = self._draw_aggregated(self._classes, q, trials, host_step)
        busiest, vs_fair, step = self._aggregated[(q, trials)]
        return self._result(scenario, busiest, vs_fair, step, ideal_step, False, "aggregated")

    def _result(
        self,
        scenario: Scenario,
        busiest: dict[str, np.ndarray],
        vs_fair: dict[str, np.ndarray],
        step: np.ndarray,
        ideal_step: float,
        deterministic: bool,
        method: Method,
    ) -> ScenarioResult:
        q = scenario.qps
        tax = step / ideal_step - 1.0
        results = {
            t: TierResult(
                tier=t,
                links=v.width,
                fair_share_max=float(v.fair1.max() * q),
                busiest_flows=Quantiles.of(busiest[t]),
                busiest_vs_fair=Quantiles.of(vs_fair[t]),
                busiest_samples=busiest[t],
            )
            for t, v in self.tiers.items()
        }
        return ScenarioResult(
            scenario, int(tax.size), deterministic, ideal_step, Quantiles.of(tax), results, tax, method
        )

    def _draw_aggregated(
        self, classes_of: dict[str, TierClasses], q: int, trials: int, host_step: float
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
        busiest = {t: np.zeros(trials) for t in self.tiers}
        vs_fair = {t: np.zeros(trials) for t in self.tiers}
        step = np.full(trials, host_step)
        for number, (t, v) in enumerate(self.tiers.items()):
            classes = classes_of[t]
            chunk = max(1, CELLS_PER_DRAW // max(1, classes.cells))
            for first in range(0, trials, chunk):
                n = min(chunk, trials - first)
                rng = np.random.default_rng([self.seed, q, number, first])
                loads = draw_loads(classes, v.width, q, rng, n)
                window = slice(first, first + n)
                _tally(v, loads, q, busiest[t][window], vs_fair[t][window], step[window])
        return busiest, vs_fair, step

    # --- setup ---------------------------------------------------------------------------------------------

    def _tier(self, tier: str) -> _Tier:
        fair = self.ideal1[tier]
        used = np.flatnonzero(fair > 0)
        slot = np.full(fair.size, -1, dtype=np.int64)
        slot[used] = np.arange(used.size)
        inv = 1.0 / self.routes.tier_gbps(tier)[used]
        uniform = float(inv[0]) if inv.size and np.all(inv == inv[0]) else 0.0
        return _Tier(slot, fair[used], inv, uniform)

    def _pair_paths(self) -> _PairPaths:
        r, f, o = self.routes, self.flows, self.order
        src_leaf, dst_leaf = f.src_leaf[o], f.dst_leaf[o]
        width = r.leaf_up.members.shape[1]
        up_link = r.leaf_up.members[src_leaf]
        spine = r.ls_spine[up_link]
        intra = f.intra.size
        down_start = r.bundle_start[spine[:intra], dst_leaf[:intra, None]]
        down_size = r.bundle_size[spine[:intra], dst_leaf[:intra, None]]
        down_slot = None
        if "spine_down" in self.tiers and (down_size.size == 0 or np.all(down_size == 1)):
            down_slot = self.tiers["spine_down"].slot[r.bundle_links[down_start]].ravel()
        leaf_up = self.tiers.get("leaf_up")
        return _PairPaths(
            width=width,
            leaf_up_slot=(leaf_up.slot[up_link] if leaf_up else up_link).ravel(),
            spine=spine.ravel(),
            down_start=down_start.ravel(),
            down_size=down_size.ravel(),
            down_slot=down_slot,
            src_leaf=src_leaf,
            dst_leaf=dst_leaf,
            dst_pod=f.dst_pod[o],
            intra=intra,
            cross_hops=self._cross_hops(spine.ravel(), dst_leaf[intra:], f.dst_pod[o][intra:])
            if intra < o.size
            else None,
        )

    def _cross_hops(self, spine: np.ndarray, dst_leaf: np.ndarray, dst_pod: np.ndarray) -> _CrossHops:
        r, tiers = self.routes, self.tiers
        # Seeds and group starts composed per choice once, so a flow's hop is one lookup of each: the values
        # are those the per-flow spine / superspine lookups and group * width products gave.
        up_width = r.spine_up.members.shape[1]
        down_width = r.superspine_down.members.shape[1]
        up = r.spine_up.members.ravel()
        superspine = r.sss_superspine[up]
        down = r.superspine_down.members.ravel()
        columns, destination = np.unique(dst_leaf, return_inverse=True)
        leaf_slot = None
        if "spine_down" in tiers and int(r.bundle_size[:, columns].max(initial=0)) <= 1:
            leaf_slot = tiers["spine_down"].slot[r.bundle_links[r.bundle_start[:, columns]]].ravel()
        return _CrossHops(
            up_slot=tiers["spine_up"].slot[up],
            up_superspine=superspine,
            down_slot=tiers["superspine_down"].slot[down],
            down_spine=r.sss_spine[down],
            leaf_slot=leaf_slot,
            destination=destination.ravel(),
            destinations=int(columns.size),
            spine_seed=r.spine_seed[spine],
            spine_group=spine * up_width,
            up_seed=r.superspine_seed[superspine],
            up_group=superspine * r.pods * down_width,
            pod_offset=np.repeat(dst_pod * down_width, self.max_qps),
        )

    def _ideal_result(self, scenario: Scenario, trials: int, ideal_step: float) -> ScenarioResult:
        q = scenario.qps
        results = {
            t: TierResult(
                tier=t,
                links=v.width,
                fair_share_max=float(v.fair1.max() * q),
                busiest_flows=Quantiles.of(np.full(trials, v.fair1.max() * q)),
                busiest_vs_fair=Quantiles.of(np.ones(trials)),
                busiest_samples=np.full(trials, v.fair1.max() * q),
            )
            for t, v in self.tiers.items()
        }
        tax = np.zeros(trials)
        return ScenarioResult(scenario, trials, True, ideal_step, Quantiles.of(tax), results, tax)

    # --- per trial -----------------------------------------------------------------------------------------

    def _draws(self, chunk_no: int, n: int, q: int, scenario: Scenario) -> tuple[np.ndarray | None, np.ndarray | None]:
        """This chunk's per-QP NIC choices, identical for every scenario (sliced to q QPs).

        Source ports and QP numbers come from separate streams, so a scenario that hashes only one of them
        still sees the same values as one that hashes both. Raw generator output viewed as uint32 is several
        times faster than Generator.integers, and the ranges are powers of two, so masking keeps it uniform.
        """
        shape = (n, self.order.size, self.max_qps)
        count = n * self.order.size * self.max_qps
        fields = scenario.hash_fields
        sport = dest_qp = None
        if str(HashField.SRC_PORT) in fields and scenario.sport == "per_qp":
            raw = _raw_u32(self.seed, chunk_no, 0, count).reshape(shape)[:, :, :q]
            sport = (raw & np.uint32(0x3FFF)) | np.uint32(ROCE_SPORT_BASE)
        if DEST_QP in fields:
            dest_qp = _raw_u32(self.seed, chunk_no, 1, count).reshape(shape)[:, :, :q] & np.uint32(0xFFFFFF)
        return sport, dest_qp

    def _route(self, keys: np.ndarray, member: np.ndarray, q: int) -> dict[str, np.ndarray]:
        """Counting slot per (trial, flow) for each fabric tier. member = pair * width + leaf uplink chosen."""
        r, p = self.routes, self.paths
        flows = keys.shape[1]
        split = p.intra * q
        out = {"leaf_up": p.leaf_up_slot[member]}
        down: list[np.ndarray] = []
        if split:
            inner = member[:, :split]
            if p.down_slot is not None:
                down.append(p.down_slot[inner])
            else:
                start = p.down_start[inner] + next_hop(
                    keys[:, :split], r.spine_seed[p.spine[inner]], p.down_size[inner]
                )
                down.append(self.tiers["spine_down"].slot[r.bundle_links[start]])
        if split < flows and p.cross_hops is not None:
            c = p.cross_hops
            k = keys[:, split:]
            cross = member[:, split:]
            if r.spine_up.uniform:
                up = next_hop(k, c.spine_seed[cross], r.spine_up.uniform)
                up += c.spine_group[cross]
            else:
                spine = p.spine[cross]
                up = _choose(r.spine_up, spine, k, r.spine_seed[spine])
            out["spine_up"] = c.up_slot[up]
            if r.superspine_down.uniform:
                sdown = next_hop(k, c.up_seed[up], r.superspine_down.uniform)
                sdown += c.up_group[up]
                sdown += _qp_columns(c.pod_offset, q, self.max_qps)
            else:
                ss = c.up_superspine[up]
                group = ss * r.pods + np.repeat(p.dst_pod[p.intra :], q)
                sdown = _choose(r.superspine_down, group, k, r.superspine_seed[ss])
            out["superspine_down"] = c.down_slot[sdown]
            spine = c.down_spine[sdown]
            if c.leaf_slot is not None:
                down.append(c.leaf_slot[spine * c.destinations + np.repeat(c.destination, q)])
            else:
                pair = spine * len(r.leaf_names) + np.repeat(p.dst_leaf[p.intra :], q)
                start = r.bundle_start.ravel()[pair]
                size = r.bundle_size.ravel()[pair]
                if int(size.max()) > 1:
                    start += next_hop(k, r.spine_seed[spine], size)
                down.append(self.tiers["spine_down"].slot[r.bundle_links[start]])
        if "spine_down" in self.tiers:
            out["spine_down"] = down[0] if len(down) == 1 else np.concatenate(down, axis=1)
        return out


def _tally(v: _Tier, loads: np.ndarray, q: int, busiest: np.ndarray, vs_fair: np.ndarray, step: np.ndarray) -> None:
    """One chunk of trials of one tier: the busiest link, its load over fair share, and the step time so far
    (written into the chunk's views of the per-trial arrays)."""
    top = loads.argmax(axis=1)
    peak = loads[np.arange(loads.shape[0]), top]
    busiest[:] = peak
    vs_fair[:] = peak / (v.fair1[top] * q)
    slowest = peak * v.uniform_inv_gbps if v.uniform_inv_gbps else (loads * v.inv_gbps).max(axis=1)
    np.maximum(step, slowest, out=step)


def _qp_columns(per_flow: np.ndarray, q: int, max_qps: int) -> np.ndarray:
    """A per-column table laid out for max_qps QPs per pair, cut to the first q QPs of each pair."""
    if q == max_qps:
        return per_flow
    return per_flow.reshape(-1, max_qps)[:, :q].ravel()


def _raw_u32(seed: int, chunk_no: int, stream: int, count: int) -> np.ndarray:
    raw = np.random.default_rng([seed, chunk_no, stream]).bit_generator.random_raw((count + 1) // 2)
    return raw.view(np.uint32)[:count]


def _choose(groups: EcmpGroups, group: np.ndarray, keys: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Each flow's choice in its group (group and seed per flow, keys per trial and flow), as a position in
    groups.members.ravel(): the _CrossHops tables are indexed by it."""
    modulus = groups.uniform or groups.size[group]
    choice = next_hop(keys, seed, modulus)
    choice += group * groups.members.shape[1]
    return choice
