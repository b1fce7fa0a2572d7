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

from netfab.health.model import PortMeta
from netfab.health.signals import Array

MIN_PEERS = 8
MAD_TO_SIGMA = 1.4826
Z_OUTLIER = 3.5
"""Iglewicz and Hoaglin's cut-off for the modified z-score."""


def peer_groups(meta: Sequence[PortMeta]) -> list[int]:
    """A group id per port; ports sharing (role, tier, direction, rail, plane), widened where too few."""
    fine = [(m.role, m.tier, m.direction, m.rail, m.plane) for m in meta]
    counts: list[dict[tuple[object, ...], int]] = [{}, {}, {}]
    for key in fine:
        for level, k in enumerate((key, (*key[:3], key[4]), key[:3])):
            counts[level][k] = counts[level].get(k, 0) + 1
    ids: dict[tuple[object, ...], int] = {}
    out = []
    for key in fine:
        for level, k in enumerate((key, (*key[:3], key[4]), key[:3])):
            if counts[level][k] >= MIN_PEERS or level == 2:
                out.append(ids.setdefault((level, *k), len(ids)))
                break
    return out


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
