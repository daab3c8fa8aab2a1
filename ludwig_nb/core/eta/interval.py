"""The 80 % interval around the remaining time.

Its variance adds up what is uncertain (ETA_METHODS.md section 3.6):

* the step time's long-run variance by batch means: the error of the mean it rests on
  (``K² σ² / n``) and the noise of the ``K`` steps to come (``K σ²``);
* each event class: the noise of each occurrence to come, and the error of its cost;
* the self-check: how far the run's own past predictions missed beyond noise, times the
  steps' share of the remaining time, squared.

The half-width is ``INTERVAL_SCALE x t(0.90, df) x sqrt(variance)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.event_costs import Cost
from ludwig_nb.core.eta.stats import t_quantile_90

__all__ = ["half_width"]


def half_width(
    *,
    remaining_s: float,
    steps_left: int,
    steps_s: float,
    step_noise: tuple[float, float, int],
    events: Iterable[tuple[int, Cost]],
    level_error: float,
) -> float:
    """Half the width of the 80 % interval, in seconds.

    Args:
        remaining_s: the point estimate (seconds); 0 gives 0.
        steps_left: regular steps still to run.
        steps_s: the seconds those steps take (the estimate's ``steps`` part).
        step_noise: ``(variance per step in seconds², steps behind the mean, degrees of
            freedom)`` from :meth:`StepRate.variance`.
        events: ``(occurrences left, cost of one)`` per event class.
        level_error: the self-check's relative variance (:meth:`StepRate.level_error`).
    """
    if remaining_s <= 0:
        return 0.0
    var, n_eff, df = step_noise
    variance = steps_left**2 * var / n_eff + steps_left * var
    for left, cost in events:
        variance += left * cost.sd**2 + left * left * cost.sd**2 / max(1, cost.n)
    variance += level_error * steps_s**2
    return const.INTERVAL_SCALE * t_quantile_90(df) * math.sqrt(variance)
