"""What the search ETA needs to cost a trial: the shape its parameters imply.

A trial that ran says its shape in its ``RunStarted`` schedule (batch size, planned steps,
evaluations). A queued trial's shape is planned by the trials' engine (``Engine.plan``)
from a draw of the search space and the training rows, which the finished trials' schedules
bracket: ``steps_per_epoch = ceil(rows / batch_size)`` puts the rows in
``((steps_per_epoch - 1) * batch_size, steps_per_epoch * batch_size]`` for each.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ludwig_nb.core.events import ScheduleInfo
from ludwig_nb.search.eta import TrialShape

__all__ = ["QueuedDraws", "rows_from_schedules", "shape_of"]

#: draws of the search space a queued trial is costed over
DRAWS = 48
#: ``Engine.plan``: (a config, training rows) -> the schedule a run of it follows
Plan = Callable[[Mapping[str, Any], int], ScheduleInfo]


def shape_of(schedule: ScheduleInfo) -> TrialShape:
    """The shape of a trial that has its plan.

    Args:
        schedule: the trial's ``RunStarted`` (or ``ScheduleChanged``) schedule.

    Returns:
        Its batch size, planned steps and evaluations.
    """
    return TrialShape(
        batch_size=int(schedule.batch_size),
        planned_steps=int(schedule.total_steps),
        evaluations=len(schedule.evaluations_after),
    )


def rows_from_schedules(schedules: Iterable[ScheduleInfo]) -> int | None:
    """The training rows the schedules' steps per epoch imply.

    The middle of the bracket they all fit, or None without a schedule.
    """
    low, high = 0, None
    for s in schedules:
        if s.batch_size <= 0 or s.steps_per_epoch <= 0:
            continue
        low = max(low, (s.steps_per_epoch - 1) * s.batch_size + 1)
        top = s.steps_per_epoch * s.batch_size
        high = top if high is None else min(high, top)
    if high is None:
        return None
    return max(1, (low + max(low, high)) // 2)


class QueuedDraws:
    """Trainer sections of trials drawn from the search space, planned on demand.

    Args:
        draws: the trainer section of each drawn trial (the config with the draw applied).
        base: the rendered config the trainers go into for planning (no ``hyperopt``).
    """

    def __init__(
        self, draws: Sequence[Mapping[str, object]], base: Mapping[str, Any] | None = None
    ) -> None:
        self.trainers = [dict(d) for d in draws]
        self.base = {k: v for k, v in (base or {}).items() if k != "hyperopt"}

    @classmethod
    def from_space(
        cls, space: Any, raw: dict[str, object], rendered: dict[str, Any] | None, seed: int = 0
    ) -> QueuedDraws:
        """Draw :data:`DRAWS` points of ``space`` (a ``SearchSpace``).

        Each one keeps its trainer section (``rendered``'s defaults under the draw).
        """
        from ludwig_nb.config.hyperopt import apply_parameters

        rng = random.Random(seed)
        defaults = dict((rendered or {}).get("trainer") or {})
        trainers = []
        for _ in range(DRAWS):
            config = apply_parameters(raw, space.sample(rng), rendered)
            trainers.append({**defaults, **(config.get("trainer") or {})})
        return cls(trainers, rendered)

    def shapes(self, rows: int, seen_batch_sizes: Sequence[int], plan: Plan) -> list[TrialShape]:
        """Each draw's shape over ``rows`` training rows, as ``plan`` (``Engine.plan``) plans it.

        A draw with ``batch_size: auto`` gets the median batch size the trials so far chose
        (none yet: no shape).
        """
        auto = int(statistics.median(seen_batch_sizes)) if seen_batch_sizes else None
        out = []
        for trainer in self.trainers:
            size = trainer.get("batch_size")
            batch = int(size) if isinstance(size, int) and size > 0 else auto
            if batch is None:
                continue
            schedule = plan({**self.base, "trainer": {**trainer, "batch_size": batch}}, rows)
            out.append(TrialShape(batch, schedule.total_steps, len(schedule.evaluations_after)))
        return out
