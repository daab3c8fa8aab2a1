"""The statistics behind the ETA: warm-up truncation, batch means, change detection.

Standard library only and free of clocks: every function takes the numbers it works on.
The methods come from simulation output analysis (MSER-5, White 1997; non-overlapping
batch means, Schmeiser 1982) and change detection (two-sided CUSUM, Page 1954); see
``shared/design/notes/ETA_METHODS.md`` section 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "Cusum",
    "batch_means_variance",
    "lag1_correlation",
    "mad",
    "median",
    "mser_truncation",
    "t_quantile_90",
    "trimmed_mean",
]

#: MAD -> standard deviation for normal data.
MAD_TO_SD = 1.4826

# One-sided 0.90 quantiles of Student's t (so +-t is a two-sided 80 % interval).
_T90 = {
    1: 3.078,
    2: 1.886,
    3: 1.638,
    4: 1.533,
    5: 1.476,
    6: 1.440,
    7: 1.415,
    8: 1.397,
    9: 1.383,
    10: 1.372,
    12: 1.356,
    15: 1.341,
    20: 1.325,
    30: 1.310,
    60: 1.296,
}


def t_quantile_90(df: int) -> float:
    """The 0.90 quantile of Student's t with ``df`` degrees of freedom (conservative
    between tabulated values); 1.2816 (normal) beyond 60. Raises ``ValueError`` if df < 1."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df > 60:
        return 1.2816
    # Between tabulated values take the smaller df: its quantile is the larger one.
    return _T90[max(k for k in _T90 if k <= df)]


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence; raises ``ValueError`` when empty."""
    if not values:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return 0.5 * (ordered[mid - 1] + ordered[mid])


def mad(values: Sequence[float], centre: float | None = None) -> float:
    """Median absolute deviation from ``centre`` (the median by default), unscaled."""
    c = median(values) if centre is None else centre
    return median([abs(v - c) for v in values])


def mser_truncation(batch_means: Sequence[float], min_kept: int = 5) -> tuple[int, bool]:
    """MSER on batch means: ``(d, accepted)``.

    ``d`` minimises ``MSER(d) = sum_{j>=d} (Y_j - mean_d)^2 / (m - d)^2`` over
    ``0 <= d <= m - min_kept``; the batches are first winsorised at ``median + 5 MAD`` of
    the second half so that one straggler does not move the cut. ``accepted`` is the
    "first half" rule: the cut is trusted only if ``d <= m / 2``. O(m log m).
    With fewer than ``2 * min_kept`` batches it returns ``(0, False)``.
    """
    m = len(batch_means)
    if m < 2 * min_kept:
        return 0, False
    second = batch_means[m // 2 :]
    centre = median(second)
    cap = centre + 5.0 * MAD_TO_SD * mad(second, centre)
    y = [min(v, cap) for v in batch_means] if cap > centre else list(batch_means)
    best_d, best = 0, math.inf
    s1 = s2 = 0.0
    # Walk d from the end backwards with suffix sums: O(m).
    stats: list[float] = [0.0] * (m + 1)
    for d in range(m - 1, -1, -1):
        s1 += y[d]
        s2 += y[d] * y[d]
        n = m - d
        stats[d] = max(0.0, s2 - s1 * s1 / n) / (n * n)
    for d in range(m - min_kept + 1):
        if stats[d] < best:
            best, best_d = stats[d], d
    return best_d, best_d <= m // 2


def batch_means_variance(prefix: Sequence[float], start: int, end: int) -> tuple[float, int]:
    """Long-run variance of the values ``x[start:end]`` by non-overlapping batch means.

    ``prefix`` holds cumulative sums (``prefix[i] = sum(x[:i])``), so the cost is
    O(number of batches) = O(sqrt(n)). Batch size ``b = max(5, isqrt(n))``; returns
    ``(b * Var(batch means), batches - 1)`` (the variance in seconds², and its degrees of
    freedom), or ``(nan, 0)`` with fewer than 4 batches.
    """
    n = end - start
    b = max(5, math.isqrt(max(n, 0)))
    k = n // b
    if k < 4:
        return math.nan, 0
    # Use the most recent k*b values: they describe the regime we extrapolate.
    first = end - k * b
    means = [(prefix[first + (i + 1) * b] - prefix[first + i * b]) / b for i in range(k)]
    mu = sum(means) / k
    var = sum((v - mu) ** 2 for v in means) / (k - 1)
    return b * var, k - 1


def trimmed_mean(values: Sequence[float], cut: float = 0.2) -> float:
    """Mean of the values left after dropping ``cut`` of them at each end."""
    ordered = sorted(values)
    k = int(len(ordered) * cut)
    kept = ordered[k : len(ordered) - k] or ordered
    return sum(kept) / len(kept)


def lag1_correlation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation of ``values`` (0.0 with fewer than 8 values)."""
    n = len(values)
    if n < 8:
        return 0.0
    mu = sum(values) / n
    dev = [v - mu for v in values]
    denom = sum(d * d for d in dev)
    if denom <= 0:
        return 0.0
    return sum(dev[i] * dev[i + 1] for i in range(n - 1)) / denom


class Cusum:
    """Two-sided CUSUM on standardised, clipped values (here: log step times).

    ``update(z)`` takes ``z = (x - mu) / sigma``, clips it to ``±clip``, and returns the
    index (counted by updates) of the first observation of the change when either sum
    crosses ``h``: the update after that sum was last zero. Otherwise ``None``.
    """

    def __init__(self, k: float = 0.5, h: float = 8.0, clip: float = 3.0) -> None:
        self.k = k
        self.h = h
        self.clip = clip
        self.reset(0)

    def reset(self, index: int) -> None:
        """Zero both sums; ``index`` is the count of the next update."""
        self.up = 0.0
        self.down = 0.0
        self._index = index
        self._up_zero = index
        self._down_zero = index

    def update(self, z: float) -> int | None:
        z = max(-self.clip, min(self.clip, z))
        i = self._index
        self._index += 1
        self.up = max(0.0, self.up + z - self.k)
        self.down = max(0.0, self.down - z - self.k)
        if self.up == 0.0:
            self._up_zero = i + 1
        if self.down == 0.0:
            self._down_zero = i + 1
        if self.up > self.h:
            return self._up_zero
        if self.down > self.h:
            return self._down_zero
        return None
