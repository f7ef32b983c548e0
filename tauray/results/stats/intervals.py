"""Interval formulas for rates (pure functions of numbers).

Rates over tasks get a task-clustered interval: trials of one task are not
independent, so :func:`task_bootstrap` resamples whole tasks (seeded, so a
report is reproducible). The Wilson interval is kept as a formula for single
binomial samples (a judge's accuracy over items, an unscored share), not used
for rates over tasks. ``results.metrics`` re-exports every name here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate; (nan, nan) when n == 0."""
    if n <= 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, center - half), min(1.0, center + half))


def task_bootstrap(values: Sequence[float], weights: Sequence[float] | None = None, n_boot: int = 2000,
                   confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the (weighted) mean of per-task values, resampling tasks;
    (nan, nan) with fewer than two tasks (one task says nothing about task variation)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return (math.nan, math.nan)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    wsum = w[idx].sum(axis=1)
    stats = np.where(wsum > 0, (v[idx] * w[idx]).sum(axis=1) / np.where(wsum > 0, wsum, 1), np.nan)
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(stats, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def rate_interval(n: Sequence[int], c: Sequence[int], n_boot: int = 2000, confidence: float = 0.95,
                  seed: int = 0) -> tuple[float, float]:
    """Task-clustered interval of the success rate sum(c) / sum(n), from per-task counted
    trials ``n`` and successes ``c`` (tasks resampled whole)."""
    n_arr = np.asarray(n, dtype=float)
    keep = n_arr > 0
    rates = np.divide(np.asarray(c, dtype=float), n_arr, out=np.zeros_like(n_arr), where=keep)
    return task_bootstrap(rates[keep], n_arr[keep], n_boot, confidence, seed)


__all__ = ["rate_interval", "task_bootstrap", "wilson_interval"]
