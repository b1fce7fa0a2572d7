"""Peer comparison: each port against the ports that should look like it (same role, tier, direction, rail and
plane), with a robust score that one bad port cannot hide behind: (x - median) / (1.4826 x MAD).

A fabric's tail is what the peers do not share. A group smaller than MIN_PEERS is widened (rail dropped, then
plane), because a median of three says little. The scale has a floor per signal: where every healthy peer
reads 0 (no shaper delays, no pause time) the MAD is 0 and any value would be "infinitely" odd; the floor says
how much of the signal is worth a look at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from netfab.health.model import PortMeta
from netfab.health.signals import Array

MIN_PEERS = 8
MAD_TO_SIGMA = 1.4826
Z_OUTLIER = 3.5
"""Iglewicz and Hoaglin's cut-off for the modified z-score."""


def peer_groups(meta: Sequence[PortMeta]) -> list[int]:
    """A group id per port; ports sharing (role, tier, direction, rail, plane), widened where too few."""
    # Each field's values -> small integers, the five as one mixed-radix integer key, so the grouping is numpy's.
    fields = (
        [m.role for m in meta], [m.tier for m in meta], [m.direction for m in meta], [m.rail for m in meta],
        [m.plane for m in meta],
    )  # fmt: skip
    codes = []
    for values in fields:
        code: dict[object, int] = {}
        codes.append(np.array([code.setdefault(v, len(code)) for v in values], dtype=np.int64))
    radix = [int(c.max()) + 1 if len(c) else 1 for c in codes]

    def key(parts: Sequence[int]) -> npt.NDArray[np.int64]:
        out = np.zeros(len(meta), dtype=np.int64)
        for f in parts:
            out = out * radix[f] + codes[f]
        return out

    # The keys tried, narrowest first: all five, without the rail, without rail and plane.
    levels = ((0, 1, 2, 3, 4), (0, 1, 2, 4), (0, 1, 2))
    out = np.full(len(meta), -1, dtype=np.int64)
    offset = 0
    for level, parts in enumerate(levels):
        _, inverse, counts = np.unique(key(parts), return_inverse=True, return_counts=True)
        take = (out < 0) & ((counts[inverse] >= MIN_PEERS) | (level == len(levels) - 1))
        out[take] = inverse[take] + offset
        offset += len(counts)
    # Renumber densely in first-seen order (ids are opaque, but stable ones make reports reproducible).
    _, first, dense = np.unique(out, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    ids: list[int] = order[dense].tolist()
    return ids


def robust_scores(values: Array, groups: Sequence[int], floor: float) -> tuple[Array, Array]:
    """(score, peer median) per port; NaN where the port or all of its peers are unmeasured."""
    g = np.asarray(groups)
    score = np.full(values.shape, np.nan)
    median = np.full(values.shape, np.nan)
    for gid in np.unique(g):
        rows = np.nonzero(g == gid)[0]
        x = values[rows]
        seen = x[~np.isnan(x)]
        if seen.size == 0:
            continue
        med = float(np.median(seen))
        mad = float(np.median(np.abs(seen - med)))
        scale = max(MAD_TO_SIGMA * mad, floor, 0.1 * abs(med))
        score[rows] = (x - med) / scale
        median[rows] = med
    return score, median


def quantiles(values: Array) -> dict[str, float | None]:
    """p50, p99 and max of the measured values (None when nothing was measured)."""
    seen = values[~np.isnan(values)]
    if seen.size == 0:
        return {"p50": None, "p99": None, "max": None}
    p50, p99 = np.percentile(seen, [50, 99])
    return {"p50": float(p50), "p99": float(p99), "max": float(seen.max())}
