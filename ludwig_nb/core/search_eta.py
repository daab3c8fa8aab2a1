"""When a hyperparameter search will be done: finished trials' durations plus running ETAs.

Pure arithmetic (stdlib only) so that the panel, the handle and the benchmark share it.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence

__all__ = ["RunningTrial", "search_remaining_s"]


@dataclasses.dataclass(frozen=True)
class RunningTrial:
    """A trial in flight: seconds since it started, and its own ETA (None: none yet)."""

    elapsed_s: float
    remaining_s: float | None


def search_remaining_s(
    finished_s: Sequence[float],
    running: Sequence[RunningTrial],
    queued: int,
    concurrency: int = 1,
) -> float | None:
    """Seconds until the search is done, or None before there is any basis.

    ``finished_s``: durations (s) of trials that ended (completed, pruned, failed all count:
    they all cost time). ``running``: the trials in flight. ``queued``: trials not started
    yet. A running trial without its own ETA is expected to last the mean finished
    duration; a queued one costs the mean finished duration (the mean, not the median:
    trial durations are skewed by the sampled batch sizes and epochs, and the sum of the
    queue is what matters), divided over ``concurrency`` slots.
    """
    typical = statistics.fmean(finished_s) if finished_s else None
    in_flight = []
    for trial in running:
        if trial.remaining_s is not None:
            in_flight.append(max(0.0, trial.remaining_s))
        elif typical is not None:
            in_flight.append(max(0.0, typical - trial.elapsed_s))
        else:
            return None
    if queued and typical is None:
        return None
    slots = max(1, concurrency)
    queued_s = (typical or 0.0) * queued / slots
    return (max(in_flight) if in_flight else 0.0) + queued_s
