"""Time to completion from stable-phase step timings (the ETA).

The parts, one module each (none imports this package, so there are no cycles):
``plan`` (``Schedule``, ``Costs``, ``Estimate``), ``estimator`` (``EtaEstimator``: the
sum of the parts and its 80 % interval), ``step_time`` (the step time of the current
regime and its self-check), ``changes`` (CUSUM change detection), ``event_costs``
(evaluations, checkpoints, epoch starts), ``stats`` (MSER-5 warm-up cut, batch means),
``tracker`` (``EtaTracker``: a run's events in), ``display`` (the text shown) and
``constants`` (every tuning constant, documented). The method and its sources:
``shared/design/notes/ETA_METHODS.md``.
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
