"""The check's statistics: flows from byte shares, how surprising a set of batches is under the model."""

from __future__ import annotations

import math

import numpy as np

from netfab.analyze.stats import empirical_quantile


def quantile(samples: np.ndarray, q: float) -> int:
    """An empirical quantile of flow counts, as a count that occurred."""
    return int(empirical_quantile(samples, q))


def binomial_tail(n: int, k: int, q: float) -> float:
    """P(at least k of n independent events of probability q): how likely k out-of-band batches are by chance."""
    return float(sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k, n + 1)))


def flows_from_bytes(tx_bytes: dict[str, int], flows: int) -> dict[str, int]:
    """Flows per uplink from its share of the bytes (every flow sends the same), by largest remainder so the
    counts add up to the flows sent."""
    total = sum(tx_bytes.values())
    raw = {i: flows * b / total for i, b in tx_bytes.items()}
    out = {i: math.floor(v) for i, v in raw.items()}
    for i in sorted(raw, key=lambda i: raw[i] - out[i], reverse=True)[: flows - sum(out.values())]:
        out[i] += 1
    return out


def tvd_test(measured: np.ndarray, model: np.ndarray, flows: int, reps: int = 1000) -> tuple[float, float]:
    """Total variation distance between the measured busiest-count histogram and the model's, and how often
    `measured.size` draws from the model itself land at least that far (a parametric bootstrap p-value: a few
    batches are far from any distribution by sampling noise alone). Seeded: same inputs, same numbers."""
    pmf = np.bincount(model, minlength=flows + 1) / model.size

    def distance(x: np.ndarray) -> np.ndarray:
        hist: np.ndarray = np.apply_along_axis(np.bincount, -1, x, minlength=flows + 1) / x.shape[-1]
        return np.asarray(0.5 * np.abs(hist - pmf).sum(axis=-1))

    observed = float(distance(measured))
    draws = np.random.default_rng(0).choice(model, size=(reps, measured.size))
    return observed, float(np.mean(distance(draws) >= observed - 1e-12))
