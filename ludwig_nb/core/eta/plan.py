"""What the run will do, what its parts cost, and what the ETA answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

__all__ = ["Costs", "Estimate", "EtaState", "IntervalKind", "Schedule"]

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
        batch_size: 0 = unknown; a change of it in ``set_schedule`` starts a regime.
        evaluation_batches: batches one evaluation runs (0 = unknown): its prior.

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
        token_reference: a language model's steps: ``step_s`` is a step of this many
            padded tokens, and steps are costed by their tokens from the start.
        token_share: of such a step, the fraction that grows with its tokens (0..1;
            ``None``: learned from the steps).
        token_quadratic: of that fraction, the part that grows with their square.
    """

    step_s: float | None = None
    evaluation_s: float | None = None
    checkpoint_s: float | None = None
    epoch_start_s: float | None = None
    token_reference: float | None = None
    token_share: float | None = None
    token_quadratic: float = 0.0


#: ``"warming_up"`` before the first stable segment (the number is provisional),
#: ``"adjusting"`` shortly after a regime change, else ``"stable"``.
EtaState = Literal["warming_up", "stable", "adjusting"]


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Time to completion at ``at`` (seconds on the caller's clock).

    Attributes:
        remaining_s: the point estimate, seconds from ``at``.
        low_s, high_s: the 80 % interval (``0 <= low_s <= remaining_s <= high_s``).
        state: see :data:`EtaState`.
        at: when the estimate was made.
        step_s: the step time in use, seconds.
        steps_done: steps finished.
        breakdown: ``remaining_s`` (before the in-progress allowance) split into
            ``steps``, ``epoch_starts``, ``evaluations`` and ``checkpoints`` seconds
            (and ``warmup`` in a pre-flight prediction).
    """

    remaining_s: float
    low_s: float
    high_s: float
    state: EtaState
    at: float
    step_s: float
    steps_done: int = 0
    breakdown: Mapping[str, float] = dataclasses.field(default_factory=dict)

    @property
    def finish_time(self) -> float:
        """Predicted end, on the caller's clock (seconds)."""
        return self.at + self.remaining_s
