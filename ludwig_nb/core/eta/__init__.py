"""Time to completion from stable-phase step timings (the ETA).

The public names live here; each part has its own module (no module imports this
package, so there are no cycles):

* ``plan``: what the run will do and what its parts cost (``Schedule``, ``Costs``);
* ``estimate``: what the ETA answers (``Estimate``, ``EtaState``);
* ``estimator``: ``EtaEstimator``, which adds up the parts below;
* ``step_time``: the step time of the current regime (``StepRate``), built on
  ``warmup`` (MSER-5: where warm-up ends), ``changes`` (CUSUM change detection) and
  ``selfcheck`` (how far past predictions missed);
* ``event_costs``: evaluations, checkpoints and epoch starts, costed from those seen;
* ``interval``: the 80 % interval;
* ``tracker``: ``EtaTracker``, which feeds a run's events to an estimator;
* ``display``: the text the dashboard and the CLI show;
* ``constants``: every tuning constant, documented; ``stats``: shared statistics.

The method and its sources: ``shared/design/notes/ETA_METHODS.md``.
"""

from __future__ import annotations

from ludwig_nb.core.eta.display import (
    WARMING_UP,
    format_estimate,
)
from ludwig_nb.core.eta.estimate import Estimate, EtaState
from ludwig_nb.core.eta.estimator import EtaEstimator
from ludwig_nb.core.eta.plan import Costs, IntervalKind, Schedule
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
