"""The cost of scheduled events: evaluations, checkpoints, the first step of each epoch.

The median of the last 3 occurrences, the run's first excluded (it carries one-off
warm-up). Before any, a prior: a pilot's measurement, or ``evaluation_batches x 0.35 x
step time``; with only the first seen, an informed prior is met half-way (3.4).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from typing import Literal

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.plan import Costs
from ludwig_nb.core.eta.stats import MAD_TO_SD, mad, median

__all__ = ["COSTED", "Cost", "EventCosts", "EventKind", "is_pending", "occurrences_left"]

EventKind = Literal["evaluation", "checkpoint", "epoch_start"]
COSTED: tuple[EventKind, ...] = ("evaluation", "checkpoint", "epoch_start")


@dataclasses.dataclass(frozen=True)
class Cost:
    """One future occurrence: ``value`` and spread ``sd`` (seconds), on ``n`` seen (0: a prior)."""

    value: float
    sd: float
    n: int


class EventCosts:
    """Occurrences seen per event class, and the cost of the next one.

    Args:
        priors: costs to use before any is observed (a pilot's measurements).
    """

    def __init__(self, priors: Costs) -> None:
        self._priors = priors
        self._seen: dict[EventKind, list[float]] = {k: [] for k in COSTED}

    def add(self, kind: EventKind, seconds: float) -> None:
        """One occurrence of ``kind`` took ``seconds``."""
        self._seen[kind].append(seconds)

    def cost(self, kind: EventKind, step_s: float, evaluation_batches: int) -> Cost:
        """The next occurrence of ``kind`` (priors sized by ``step_s`` seconds, batches)."""
        seen = self._seen[kind]
        if len(seen) >= 2:
            used = seen[1:][-const.COST_KEEP :]
            value = median(used)
            spread = MAD_TO_SD * mad(used, value) if len(used) >= 3 else abs(used[-1] - used[0])
            return Cost(value, max(spread, const.COST_MIN_SPREAD * value), len(used))
        prior, informed = self._prior(kind, step_s, evaluation_batches)
        if seen and informed and prior > 0:
            # The first occurrence carries one-off warm-up of unknown size: meet an
            # informed prior half-way, the disagreement as the spread.
            value = math.sqrt(prior * seen[0]) if seen[0] > 0 else 0.0
            return Cost(value, max(0.25 * value, 0.5 * abs(seen[0] - prior)), 1)
        if seen:
            return Cost(seen[0], 0.5 * seen[0], 1)
        return Cost(prior, prior, 0)

    def _prior(self, kind: EventKind, step_s: float, batches: int) -> tuple[float, bool]:
        """The cost before any occurrence is seen.

        Returns:
            ``(seconds per occurrence, informed)``: informed when it rests on a pilot's
            measurement or the evaluation's batch count rather than a default.
        """
        p = self._priors
        if kind == "evaluation":
            if p.evaluation_s is not None:
                return p.evaluation_s, True
            return batches * const.EVAL_PRIOR_FACTOR * step_s, batches > 0
        if kind == "checkpoint":
            return (p.checkpoint_s or 0.0), p.checkpoint_s is not None
        if p.epoch_start_s is not None:
            return p.epoch_start_s, True
        return step_s, False


def occurrences_left(after: tuple[int, ...], total_steps: int, last_step: int, done: int) -> int:
    """Occurrences of an event still to come.

    Args:
        after: the sorted steps after which the event runs.
        total_steps: steps in the run.
        last_step: the last step finished (-1 before any).
        done: the last step after which an occurrence was seen (-2 before any).
    """
    count = bisect.bisect_left(after, total_steps) - bisect.bisect_right(after, last_step)
    pending = is_pending(after, last_step, done) and last_step < total_steps
    return max(0, count) + (1 if pending else 0)


def is_pending(after: tuple[int, ...], last_step: int, done: int) -> bool:
    """Is an occurrence due after ``last_step`` and not seen yet (``done`` as above)?"""
    idx = bisect.bisect_left(after, last_step)
    return idx < len(after) and after[idx] == last_step and done != last_step
