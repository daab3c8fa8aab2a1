"""The self-check on past misses: how far this run's own step-time predictions missed.

Batch means describe the noise of a run that stays as it is; they cannot know that a
run's level wanders or changes. So, once stable, the step time predicted is recorded at
every 10 % of growth (the last 64 kept), and :meth:`SelfCheck.level_error` compares
each with the mean step time since, keeping the squared log miss beyond the noise a
stationary run would show. The interval adds it to its variance: a steady run adds
about 0, a run whose level has wandered or changed gets a wider interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const

__all__ = ["SelfCheck"]


class SelfCheck:
    """Past predictions of the step time, and how far they missed."""

    def __init__(self) -> None:
        self._predictions: list[tuple[int, float]] = []  # (steps seen, seconds predicted)
        self._next = const.BACKTEST_MIN_STEPS

    def due(self, steps: int) -> bool:
        """Is a prediction due after ``steps`` regular steps?"""
        return steps >= self._next

    def record(self, steps: int, predicted_s: float | None) -> None:
        """Record the step time predicted after ``steps`` regular steps.

        Args:
            steps: regular steps seen.
            predicted_s: the step time predicted (seconds); ``None`` while not stable:
                nothing is recorded, the next prediction is scheduled.
        """
        if predicted_s is not None and predicted_s > 0:
            self._predictions.append((steps, predicted_s))
            del self._predictions[: -const.BACKTEST_KEEP]
        self._next = steps + max(const.BACKTEST_MIN_STEPS // 2, int(steps * const.REVISIT_GROWTH))

    def level_error(self, prefix: Sequence[float], basis: Sequence[int], var: float) -> float:
        """The mean over past predictions of ``max(0, e² - noise)``.

        ``e`` is the log ratio of the mean step time since a prediction to the
        prediction; ``noise`` is what a stationary run with long-run variance ``var``
        would give: the error of the mean the prediction rested on plus the noise of
        the mean since.

        Args:
            prefix: cumulative sums of the regular step times (seconds).
            basis: the current segment's starts, latest first (its stable cut, then its
                first step): a prediction rested on the steps since the latest one
                before it.
            var: long-run variance of one step (seconds²).

        Returns:
            A relative variance (dimensionless); 0 with fewer than 3 predictions that
            are at least 20 steps old.
        """
        end = len(prefix) - 1
        misses = []
        for at, predicted in self._predictions:
            since = end - at
            if since < const.BACKTEST_MIN_STEPS:
                continue
            realized = (prefix[end] - prefix[at]) / since
            if realized <= 0:
                continue
            base = next((b for b in basis if b < at), basis[-1])
            rested_on = max(1, at - base)
            noise = var * (1.0 / since + 1.0 / rested_on) / (realized * realized)
            misses.append(max(0.0, math.log(realized / predicted) ** 2 - noise))
        return sum(misses) / len(misses) if len(misses) >= 3 else 0.0
