"""Aggregated ECMP draws, for jobs too big to hash flow by flow (an all-to-all of a thousand GPUs and up).

When every QP brings its own entropy (a per-QP UDP source port or BTH destination QP) and no two switches on
one path share a hash seed, the per-flow model's choice at each hop is an independent uniform pick among the
group's members. The number of flows on the links of one tier is then a sum of multinomials, one per class of
flows that share a distribution over that tier's links, and it can be drawn as such. The cost grows with
classes x links, not with flows: an all-to-all of 1,024 GPUs at 16 QPs has 2 million flows per trial, but a
few thousand (class, link) cells.

What this gives up, and the report says so: each tier is drawn on its own. Within a tier the loads have the
per-flow model's joint distribution; across tiers the (weak) correlation through shared flows, e.g. between
a leaf uplink and a spine downlink that the same flows cross, is not kept, and the step time is the maximum
over independently drawn tiers. tests/analyze/test_ecmp_aggregate.py holds both models to the same tail on
fabrics where the per-flow one is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netfab.analyze.flows import FlowSet, aggregate_weights, expand_groups
from netfab.analyze.routing import FabricRoutes

CELLS_PER_DRAW = 1 << 21
"""Multinomial cells (trials x classes x support) per draw: bounds the memory of one chunk to tens of MB."""
NORMAL_MIN_FLOWS = 1000
"""A class whose every cell expects at least this many flows is drawn from the multinomial's normal
approximation (same mean and covariance), ten times cheaper than exact binomials. A cell's skew is
1/sqrt(n p), under 3.2 % here, which moves its 99.9th percentile by under 0.1 % of its count: well inside one
flow on the busiest link of a big all-to-all, where this applies. Smaller counts are drawn exactly."""


@dataclass(frozen=True)
class TierClasses:
    """Flow classes of one tier: class r puts each of its flows on slots[r, j] with probability probs[r, j]."""

    count: np.ndarray
    """Flows per QP in each class (GPU pairs)."""
    slots: np.ndarray
    """Tier slot of each support link; the tier's width marks padding."""
    probs: np.ndarray

    @property
    def cells(self) -> int:
        return int(self.probs.size)


def independent_hops(routes: FabricRoutes) -> bool:
    """Whether every hash on a path uses its own seed, so hops choose independently (no polarisation).

    A flow hashes at its leaf, at a spine going up and at a superspine (cross-pod), and at a spine going
    down only where a bundle has parallel links. Leaves sharing a seed among themselves do not matter: a
    flow meets one leaf.
    """
    leaf = set(routes.leaf_seed.tolist())
    spine = set(routes.spine_seed.tolist())
    superspine = set(routes.superspine_seed.tolist())
    if leaf & spine or leaf & superspine or spine & superspine:
        return False
    bundles = routes.bundle_size.max(initial=0) > 1
    return not (bundles and len(spine) < routes.spine_seed.size)


def tier_classes(
    routes: FabricRoutes, flows: FlowSet, order: np.ndarray, slots: dict[str, np.ndarray]
) -> dict[str, TierClasses]:
    """The classes of every fabric tier the job uses. `slots[tier]` maps a directed link to its tier slot."""
    src, dst = flows.src_leaf[order], flows.dst_leaf[order]
    out: dict[str, TierClasses] = {}
    if src.size == 0:
        return out
    leaves, per_leaf = np.unique(src, return_counts=True)
    size = routes.leaf_up.size[leaves]
    members = routes.leaf_up.members[leaves]
    used = np.arange(members.shape[1])[None, :] < size[:, None]
    width = slots["leaf_up"].max(initial=-1) + 1
    out["leaf_up"] = TierClasses(
        count=per_leaf,
        slots=np.where(used, slots["leaf_up"][members], width),
        probs=np.where(used, 1.0 / size[:, None], 0.0),
    )
    entries = _upper_entries(routes, src, dst)
    for tier, (key_count, key, link, weight) in entries.items():
        if link.size:
            out[tier] = _merge(key_count, key, slots[tier][link], weight, int(slots[tier].max(initial=-1) + 1))
    return out


def draw_loads(classes: TierClasses, width: int, qps: int, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Flows per tier slot in each of `trials` trials: (trials, width)."""
    rows = classes.count.size
    n = classes.count * qps
    expected = n[:, None] * classes.probs
    if np.all((expected >= NORMAL_MIN_FLOWS) | (classes.probs == 0)):
        counts = _normal_multinomial(n, classes.probs, rng, trials)
    else:
        counts = rng.multinomial(n, classes.probs, size=(trials, rows))
    index = np.arange(trials)[:, None, None] * (width + 1) + classes.slots[None, :, :]
    loads = np.bincount(index.ravel(), weights=counts.ravel(), minlength=trials * (width + 1))
    return loads.reshape(trials, width + 1)[:, :width]


def _normal_multinomial(n: np.ndarray, probs: np.ndarray, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Multinomial(n, p) counts from the normal with its mean n p and covariance n (diag(p) - p p^T).

    X_j = sqrt(n p_j) Z_j has covariance n diag(p); subtracting p_j * sum(X) makes the total exactly n
    and gives the multinomial's covariance (the probabilities sum to one over the support).
    """
    scale = np.sqrt(n[:, None] * probs)
    x = rng.standard_normal((trials, *probs.shape)) * scale
    x -= probs * x.sum(axis=2, keepdims=True)
    x += n[:, None] * probs
    counts: np.ndarray = np.rint(np.maximum(x, 0.0))
    return counts


# --- classes ---------------------------------------------------------------------------------------------


def _upper_entries(routes: FabricRoutes, src: np.ndarray, dst: np.ndarray) -> dict[str, tuple[np.ndarray, ...]]:
    """(flows per key, key, link, probability) per tier above the leaf uplinks.

    A key is (the spines a source leaf's uplinks reach, destination leaf): every flow of one key has the
    same distribution over the spine, superspine and downlink tiers, whichever leaf of that spine set it
    starts from. The spread is pushed through the same next-hop tables the per-flow model uses.
    """
    n_leaves = len(routes.leaf_names)
    signature = _spine_signatures(routes, np.unique(src))
    key_all = signature[src] * n_leaves + dst
    keys, key_count = np.unique(key_all, return_counts=True)
    sig, kdst = keys // n_leaves, keys % n_leaves
    # Leaf -> spine: each uplink of the signature's representative leaf with equal probability.
    rep = _representatives(signature, src)
    k, s, w = _spread(routes.leaf_up.members, routes.leaf_up.size, rep[sig])
    s = routes.ls_spine[s]
    k, s, w = aggregate_weights(k, s, w, routes.spine_seed.size)
    here = routes.spine_pod[s] == routes.leaf_pod[kdst[k]]
    down = [_bundle(routes, k[here], s[here], kdst, w[here])]
    up: tuple[np.ndarray, ...] = (np.zeros(0, np.int64),) * 2 + (np.zeros(0),)
    ss_down: tuple[np.ndarray, ...] = up
    if not np.all(here):
        ck, cs, cw = k[~here], s[~here], w[~here]
        link, row = expand_groups(routes.spine_up.members, routes.spine_up.size, cs)
        uw = cw[row] / routes.spine_up.size[cs][row]
        up = (ck[row], link, uw)
        k2, ss, w2 = aggregate_weights(ck[row], routes.sss_superspine[link], uw, routes.superspine_seed.size)
        group = ss * routes.pods + routes.leaf_pod[kdst[k2]]
        link, row = expand_groups(routes.superspine_down.members, routes.superspine_down.size, group)
        dw = w2[row] / routes.superspine_down.size[group][row]
        ss_down = (k2[row], link, dw)
        k3, s2, w3 = aggregate_weights(k2[row], routes.sss_spine[link], dw, routes.spine_seed.size)
        down.append(_bundle(routes, k3, s2, kdst, w3))
    down_k = np.concatenate([d[0] for d in down])
    down_l = np.concatenate([d[1] for d in down])
    down_w = np.concatenate([d[2] for d in down])
    return {
        "spine_up": (key_count, *up),
        "superspine_down": (key_count, *ss_down),
        "spine_down": (key_count, down_k, down_l, down_w),
    }


def _spine_signatures(routes: FabricRoutes, leaves: np.ndarray) -> np.ndarray:
    """Leaf -> id of the multiset of spines its uplinks reach (-1 for leaves not in the job)."""
    out = np.full(len(routes.leaf_names), -1, dtype=np.int64)
    seen: dict[bytes, int] = {}
    for leaf in leaves.tolist():
        members = routes.leaf_up.members[leaf, : routes.leaf_up.size[leaf]]
        spines = np.sort(routes.ls_spine[members]).tobytes()
        out[leaf] = seen.setdefault(spines, len(seen))
    return out


def _representatives(signature: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Signature id -> one leaf that has it."""
    ids = signature[src]
    first = np.unique(ids, return_index=True)[1]
    rep = np.zeros(int(ids.max()) + 1, dtype=np.int64)
    rep[ids[first]] = src[first]
    return rep


def _spread(members: np.ndarray, size: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, ...]:
    """(row, member link, probability) for each row's group, uniform over its members."""
    link, row = expand_groups(members, size, group)
    return row, link, 1.0 / size[group][row]


def _bundle(
    routes: FabricRoutes, k: np.ndarray, spine: np.ndarray, kdst: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Spine -> destination leaf over the bundle's parallel links, evenly."""
    d = kdst[k]
    start, size = routes.bundle_start[spine, d], routes.bundle_size[spine, d]
    row = np.repeat(np.arange(k.size), size)
    offset = np.arange(row.size) - np.repeat(np.cumsum(size) - size, size)
    return k[row], routes.bundle_links[start[row] + offset], w[row] / size[row]


def _merge(key_count: np.ndarray, key: np.ndarray, slot: np.ndarray, weight: np.ndarray, width: int) -> TierClasses:
    """One class per distinct distribution: keys with the same one pool their flows (a sum of iid
    multinomials with one probability vector is one multinomial)."""
    order = np.lexsort((slot, key))
    key, slot, weight = key[order], slot[order], weight[order]
    bounds = np.flatnonzero(np.diff(key)) + 1
    classes: dict[bytes, int] = {}
    counts: list[int] = []
    supports: list[tuple[np.ndarray, np.ndarray]] = []
    for k_slots, k_weights, k in zip(
        np.split(slot, bounds), np.split(weight, bounds), key[np.r_[0, bounds]].tolist(), strict=True
    ):
        probs = k_weights / k_weights.sum()
        # Rounded so that float noise from different summation orders does not split one class in two.
        signature = k_slots.tobytes() + np.round(probs, 12).tobytes()
        r = classes.get(signature)
        if r is None:
            r = classes[signature] = len(counts)
            counts.append(0)
            supports.append((k_slots, probs))
        counts[r] += int(key_count[k])
    widest = max(s.size for s, _ in supports)
    slots = np.full((len(supports), widest), width, dtype=np.int64)
    probs = np.zeros((len(supports), widest))
    for r, (s, p) in enumerate(supports):
        slots[r, : s.size] = s
        probs[r, : p.size] = p
    return TierClasses(np.array(counts, dtype=np.int64), slots, probs)
