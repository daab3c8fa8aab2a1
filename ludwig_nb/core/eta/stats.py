"""The statistics of the ETA: median, MAD, trimmed mean, batch means, Student's t, MSER.

Clock-free: each function takes the numbers it works on. Batch means: Schmeiser (1982);
MSER-5: White (1997), the most accurate of 44 warm-up rules in Hoad, Robinson & Davies
(2008); ETA_METHODS.md section 3.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from statistics import median  # raises StatisticsError (a ValueError) when empty

from ludwig_nb.core.eta import constants as const

__all__ = [
    "MAD_TO_SD",
    "batch_means_variance",
    "lag1_correlation",
    "mad",
    "median",
    "mser_truncation",
    "t_quantile_90",
    "trimmed_mean",
    "warmup_cut",
]

#: MAD -> standard deviation for normal data.
MAD_TO_SD = 1.4826

# One-sided 0.90 quantiles of Student's t (so +-t is a two-sided 80 % interval).
_T90 = {1: 3.078, 2: 1.886, 3: 1.638, 4: 1.533, 5: 1.476, 6: 1.440, 7: 1.415, 8: 1.397}
_T90 |= {9: 1.383, 10: 1.372, 12: 1.356, 15: 1.341, 20: 1.325, 30: 1.310, 60: 1.296}


def t_quantile_90(df: int) -> float:
    """The 0.90 quantile of Student's t with ``df`` degrees of freedom.

    Between tabulated values, that of the next smaller ``df`` (conservative); the
    normal's beyond 60.

    Raises:
        ValueError: ``df`` is below 1.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df > 60:
        return const.Z80
    return _T90[max(k for k in _T90 if k <= df)]


def mad(values: Sequence[float], centre: float | None = None) -> float:
    """Median absolute deviation from ``centre`` (the median by default), unscaled."""
    c = median(values) if centre is None else centre
    return median([abs(v - c) for v in values])


def batch_means_variance(prefix: Sequence[float], start: int, end: int) -> tuple[float, int]:
    """Long-run variance of the values ``x[start:end]`` by non-overlapping batch means.

    Batch size ``b = max(5, isqrt(n))`` over the most recent ``k * b`` values; O(sqrt(n)).

    Args:
        prefix: cumulative sums, ``prefix[i] = sum(x[:i])``.
        start: first index of the values.
        end: one past the last index.

    Returns:
        ``(b * Var(batch means), k - 1)``: the variance per value (the values' unit
        squared) and its degrees of freedom; ``(nan, 0)`` under 4 batches.
    """
    n = end - start
    b = max(5, math.isqrt(max(n, 0)))
    k = n // b
    if k < 4:
        return math.nan, 0
    first = end - k * b
    means = [(prefix[first + (i + 1) * b] - prefix[first + i * b]) / b for i in range(k)]
    mu = sum(means) / k
    var = sum((v - mu) ** 2 for v in means) / (k - 1)
    return b * var, k - 1


def trimmed_mean(values: Sequence[float], cut: float = 0.2) -> float:
    """Mean of the values left after dropping the fraction ``cut`` of them at each end."""
    ordered = sorted(values)
    k = int(len(ordered) * cut)
    kept = ordered[k : len(ordered) - k] or ordered
    return sum(kept) / len(kept)


def lag1_correlation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation of ``values`` (0.0 with fewer than 8 values)."""
    if len(values) < 8:
        return 0.0
    mu = sum(values) / len(values)
    dev = [v - mu for v in values]
    denom = sum(d * d for d in dev)
    return sum(a * b for a, b in itertools.pairwise(dev)) / denom if denom > 0 else 0.0


def mser_truncation(batch_means: Sequence[float], min_kept: int = 5) -> tuple[int, bool]:
    """MSER on batch means ``Y_1..Y_m`` (in order), keeping at least ``min_kept``.

    ``d`` minimises ``sum_{j>=d} (Y_j - mean_d)^2 / (m - d)^2``, after winsorising at
    ``median + 5 MAD`` of the second half (one straggler batch does not move it). O(m).

    Returns:
        ``(d, accepted)``: the cut in batches, and the "first half" rule ``d <= m / 2``;
        ``(0, False)`` with fewer than ``2 * min_kept`` batches.
    """
    m = len(batch_means)
    if m < 2 * min_kept:
        return 0, False
    second = batch_means[m // 2 :]
    centre = median(second)
    cap = centre + const.MSER_WINSOR_MADS * MAD_TO_SD * mad(second, centre)
    y = [min(v, cap) for v in batch_means] if cap > centre else list(batch_means)
    stats = [0.0] * (m + 1)
    s1 = s2 = 0.0
    for d in range(m - 1, -1, -1):  # suffix sums, from the end backwards
        s1 += y[d]
        s2 += y[d] * y[d]
        n = m - d
        stats[d] = max(0.0, s2 - s1 * s1 / n) / (n * n)
    best_d = min(range(m - min_kept + 1), key=lambda d: (stats[d], d))
    return best_d, best_d <= m // 2


def warmup_cut(prefix: Sequence[float], start: int, end: int) -> tuple[int, bool]:
    """The end of warm-up in the step times ``x[start:end]`` (``prefix``: their sums).

    Batches of 5 steps (wider past 2000 batches), then :func:`mser_truncation`.

    Returns:
        ``(cut, accepted)``: the first step index after warm-up, and whether MSER
        trusts it.
    """
    n = end - start
    b = const.MSER_BATCH * max(1, math.ceil(n / (const.MSER_BATCH * const.MSER_MAX_BATCHES)))
    means = [(prefix[start + (i + 1) * b] - prefix[start + i * b]) / b for i in range(n // b)]
    d, accepted = mser_truncation(means, min_kept=2)
    return start + d * b, accepted
