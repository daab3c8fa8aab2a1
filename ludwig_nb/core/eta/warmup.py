"""Where warm-up ends: MSER-5 truncation of a segment's step times.

MSER (White 1997; the most accurate of 44 methods in Hoad, Robinson & Davies 2008)
chooses the cut that minimises the standard error of the mean of what is kept. The cut
is trusted only in the first half of the segment; otherwise the segment is still
warming up (ETA_METHODS.md section 3.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.stats import MAD_TO_SD, mad, median

__all__ = ["mser_truncation", "warmup_cut"]


def mser_truncation(batch_means: Sequence[float], min_kept: int = 5) -> tuple[int, bool]:
    """MSER on batch means.

    ``d`` minimises ``MSER(d) = sum_{j>=d} (Y_j - mean_d)^2 / (m - d)^2`` over
    ``0 <= d <= m - min_kept``; the batch means are first winsorised at ``median + 5
    MAD`` of the second half, so that one straggler batch does not move the cut. O(m).

    Args:
        batch_means: the segment's batch means ``Y_1..Y_m``, in order.
        min_kept: batches that must stay after the cut.

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
    """The end of warm-up in the step times ``x[start:end]``.

    Batches of 5 steps (wider for long segments, at most 2000 batches), then
    :func:`mser_truncation` keeping at least 2 batches.

    Args:
        prefix: cumulative sums of the step times, ``prefix[i] = sum(x[:i])``.
        start: the segment's first step index.
        end: one past its last.

    Returns:
        ``(cut, accepted)``: the first step index after warm-up, and whether MSER
        trusts it.
    """
    n = end - start
    b = const.MSER_BATCH * max(1, math.ceil(n / (const.MSER_BATCH * const.MSER_MAX_BATCHES)))
    means = [(prefix[start + (i + 1) * b] - prefix[start + i * b]) / b for i in range(n // b)]
    d, accepted = mser_truncation(means, min_kept=2)
    return start + d * b, accepted
