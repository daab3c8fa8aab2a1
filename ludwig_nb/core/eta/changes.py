"""Change detection: a two-sided CUSUM on medians of blocks of log step time.

64 steps into a segment, :class:`ChangeDetector` fits a reference (median and long-run
spread of 8-step block medians of log step time on the stable part, refitted at doubling
lengths) and feeds each new block median, standardised, to a :class:`Cusum` (k = 0.5,
h = 8, clip 3; ETA_METHODS.md 3.5). An alarm names the first step of the block after the
alarming sum was last zero: where the change began.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.stats import MAD_TO_SD, lag1_correlation, mad, median

__all__ = ["ChangeDetector", "Cusum"]


class Cusum:
    """Two-sided CUSUM on standardised, clipped values (Page 1954).

    Args:
        k: slack per observation, in standard deviations.
        h: alarm threshold, in standard deviations.
        clip: observations are clipped to ``±clip`` first.
    """

    def __init__(
        self, k: float = const.CUSUM_K, h: float = const.CUSUM_H, clip: float = const.CUSUM_CLIP
    ) -> None:
        self.k, self.h, self.clip = k, h, clip
        self.up = self.down = 0.0
        self.reset(0)

    def reset(self, index: int) -> None:
        """Zero both sums; ``index`` is the count of the next update."""
        self.up = self.down = 0.0
        self._index = self._up_zero = self._down_zero = index

    def update(self, z: float) -> int | None:
        """Take one standardised observation ``z = (x - mu) / sigma``.

        Returns:
            When a sum crosses ``h``: the index (counted by updates) of the update after
            that sum was last zero, where the change began; otherwise ``None``.
        """
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


class ChangeDetector:
    """Alarms when the current segment's step time shifts.

    :meth:`observe` each step, then :meth:`refit`; :meth:`restart` at each new segment.
    """

    def __init__(self) -> None:
        self._cusum = Cusum()
        self._seg = 0
        self._mu: float | None = None
        self._sigma = const.SIGMA_FLOOR
        self._refit_next = const.MIN_REF_BLOCKS * const.BLOCK
        self._block: list[float] = []
        self._block_origin = 0

    def restart(self, index: int) -> None:
        """A new segment begins at step ``index``: forget its reference and sums."""
        self._seg = index
        self._mu = None
        self._sigma = const.SIGMA_FLOOR
        self._refit_next = index + const.MIN_REF_BLOCKS * const.BLOCK
        self._restart_blocks(index)

    @property
    def level_s(self) -> float | None:
        """The segment's typical step time (seconds, the reference), or ``None`` before it."""
        return None if self._mu is None else math.exp(self._mu)

    def observe(self, duration: float) -> int | None:
        """Take the next step's duration (seconds).

        Returns:
            On an alarm, the step index where the change began (not before the
            segment's start); else ``None``.
        """
        if self._mu is None:
            return None
        self._block.append(math.log(max(duration, 1e-9)))
        if len(self._block) < const.BLOCK:
            return None
        z = (median(self._block) - self._mu) / self._sigma
        self._block = []
        change = self._cusum.update(z)
        if change is None:
            return None
        return max(self._seg, self._block_origin + change * const.BLOCK)

    def refit(self, x: Sequence[float], cut: int | None) -> None:
        """Fit the reference on the segment's stable part when due (64 steps in, doubling).

        Args:
            x: every regular step time so far (seconds).
            cut: the segment's first stable step, or ``None`` (its second half is used).
        """
        end = len(x)
        if end < self._refit_next:
            return
        start = self._seg
        lo = cut if cut is not None else start + (end - start) // 2
        lo = max(start, min(lo, end - const.MIN_REF_BLOCKS * const.BLOCK), end - const.REF_WINDOW)
        logs = [math.log(max(v, 1e-9)) for v in x[lo:end]]
        blocks = [
            median(logs[i : i + const.BLOCK])
            for i in range(0, len(logs) - const.BLOCK + 1, const.BLOCK)
        ]
        self._mu = median(blocks)
        spread = MAD_TO_SD * mad(blocks, self._mu)
        # Neighbouring blocks are correlated: the long-run spread of an AR(1).
        rho = min(const.MAX_RHO, max(0.0, lag1_correlation(blocks)))
        # At least the per-step spread scaled to a block median, doubled for the
        # correlation a short window cannot measure.
        floor = 2.0 * const.MEDIAN_SD * MAD_TO_SD * mad(logs) / math.sqrt(const.BLOCK)
        self._sigma = max(const.SIGMA_FLOOR, spread * math.sqrt((1 + rho) / (1 - rho)), floor)
        self._restart_blocks(end)
        self._refit_next = start + 2 * (end - start)

    def forget(self, drop: int) -> None:
        """The ``drop`` oldest step times were forgotten: indices move down with them."""
        self._seg = max(0, self._seg - drop)
        self._refit_next = max(0, self._refit_next - drop)
        self._block_origin = max(0, self._block_origin - drop)

    def _restart_blocks(self, origin: int) -> None:
        self._block_origin = origin
        self._block = []
        self._cusum.reset(0)
