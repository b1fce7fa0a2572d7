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
