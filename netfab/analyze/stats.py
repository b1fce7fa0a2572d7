"""Tail figures. Reports carry p50, p99 and max next to the mean: a barrier waits for the tail."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def empirical_quantile(values: np.ndarray, q: float) -> float:
    """The q-th percentile as a value that actually occurred (inverted_cdf: a load of 17 flows, not 16.5);
    0 for no values."""
    return float(np.percentile(values, q, method="inverted_cdf")) if values.size else 0.0


@dataclass(frozen=True, slots=True)
class Quantiles:
    p50: float
    p99: float
    max: float
    mean: float

    @classmethod
    def of(cls, values: np.ndarray) -> Quantiles:
        if values.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        return cls(
            empirical_quantile(values, 50), empirical_quantile(values, 99), float(values.max()), float(values.mean())
        )

    def as_dict(self, digits: int = 4) -> dict[str, float]:
        return {
            "p50": round(self.p50, digits),
            "p99": round(self.p99, digits),
            "max": round(self.max, digits),
            "mean": round(self.mean, digits),
        }


def paired_quantile_gain(
    own: np.ndarray, other: np.ndarray, q: float, seed: int, reps: int = 400
) -> tuple[float, float, float]:
    """quantile(own) - quantile(other), with its 95 % bootstrap interval, over paired trials.

    Scenarios run on common random numbers (trial t of every scenario draws the same ports and QPs), so
    resampling trial indices jointly keeps the pairing and the interval reflects the configurations'
    difference, not the draws'. A deterministic scenario (one routing for every trial) is a constant.
    """
    n = max(own.size, other.size)
    if n == 0:
        return 0.0, 0.0, 0.0
    a = np.full(n, own[0]) if own.size == 1 else own[:n]
    b = np.full(n, other[0]) if other.size == 1 else other[:n]
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    point = empirical_quantile(a, q) - empirical_quantile(b, q)
    idx = np.random.default_rng(seed).integers(0, n, size=(reps, n))
    diffs = np.percentile(a[idx], q, axis=1, method="inverted_cdf") - np.percentile(
        b[idx], q, axis=1, method="inverted_cdf"
    )
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(point), float(lo), float(hi)
