"""What the run will do and what its parts cost: ``Schedule``, ``Costs``, ``IntervalKind``."""

from __future__ import annotations

import dataclasses
from typing import Literal

__all__ = ["Costs", "IntervalKind", "Schedule"]

#: A gap between steps: evaluations and checkpoints are costed for the future, pauses
#: are excluded and not extrapolated.
IntervalKind = Literal["evaluation", "checkpoint", "pause"]


def _sorted_unique(values: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted({int(v) for v in values}))


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The plan of a run, in 0-based step indices.

    Attributes:
        total_steps: steps in the run (with early stopping, the upper bound).
        epoch_starts: the first step of each epoch.
        evaluations_after: steps after which an evaluation runs.
        checkpoints_after: steps after which a checkpoint is saved.
        batch_size: optional (0 = unknown); a change of it in
            :meth:`EtaEstimator.set_schedule` starts a new regime at once.
        evaluation_batches: batches one evaluation runs (0 = unknown); sizes the
            evaluation's cost before one is timed.

    Raises:
        ValueError: ``total_steps`` is negative.
    """

    total_steps: int
    epoch_starts: tuple[int, ...] = ()
    evaluations_after: tuple[int, ...] = ()
    checkpoints_after: tuple[int, ...] = ()
    batch_size: int = 0
    evaluation_batches: int = 0

    def __post_init__(self) -> None:
        """Check the total and sort and de-duplicate the step lists."""
        if self.total_steps < 0:
            raise ValueError(f"total_steps must be >= 0, got {self.total_steps}")
        for name in ("epoch_starts", "evaluations_after", "checkpoints_after"):
            object.__setattr__(self, name, _sorted_unique(getattr(self, name)))


@dataclasses.dataclass(frozen=True)
class Costs:
    """Per-occurrence costs in seconds, measured by a pilot or assumed; ``None`` = unknown.

    Attributes:
        step_s: one regular training step.
        evaluation_s: one evaluation.
        checkpoint_s: one checkpoint.
        epoch_start_s: the first step of an epoch (the whole step).
    """

    step_s: float | None = None
    evaluation_s: float | None = None
    checkpoint_s: float | None = None
    epoch_start_s: float | None = None
