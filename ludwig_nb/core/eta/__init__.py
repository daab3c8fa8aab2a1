"""Time to completion from stable-phase step timings (the ETA).

Parts (none imports this package): ``plan``, ``estimator`` (the sum and its interval),
``step_time`` (and its self-check), ``changes`` (CUSUM), ``event_costs``, ``stats`` (MSER,
batch means), ``tracker`` (a run's events in), ``display``, ``constants`` (documented).
Method and sources: ``shared/design/notes/ETA_METHODS.md``.
"""

from __future__ import annotations

from ludwig_nb.core.eta.display import WARMING_UP, format_estimate
from ludwig_nb.core.eta.estimator import EtaEstimator
from ludwig_nb.core.eta.plan import Costs, Estimate, EtaState, IntervalKind, Schedule
from ludwig_nb.core.eta.tracker import EtaTracker, schedule_from_info

__all__ = [
    "WARMING_UP",
    "Costs",
    "Estimate",
    "EtaEstimator",
    "EtaState",
    "EtaTracker",
    "IntervalKind",
    "Schedule",
    "format_estimate",
    "schedule_from_info",
]
