"""The training plan and the learning-rate schedule, with Ludwig's names.

The plan: steps, epochs, where evaluations and checkpoints fall. The schedule: warm-up, decay,
reduce on plateau.

A step is one batch (forward + backward); with ``gradient_accumulation_steps`` > 1 the
optimizer steps every that many batches.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.events import ScheduleInfo

__all__ = ["LearningRate", "Plan", "plan_training"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """The training plan: batch size, step counts and the steps after which to evaluate and save."""

    batch_size: int
    steps_per_epoch: int
    total_steps: int
    epochs: int
    checkpoint_every: int  # steps
    checkpoints_after: tuple[int, ...]
    evaluations_after: tuple[int, ...]
    evaluation_batches: int = 0  # batches one evaluation runs over every split it evaluates
    eval_batch_size: int = 0
    batch_note: str = ""  # why the batch sizes are what they are, when auto picked them

    def epoch_of(self, step: int) -> int:
        """The 0-based epoch that step ``step`` (0-based) belongs to."""
        return step // self.steps_per_epoch

    def info(self) -> ScheduleInfo:
        """The plan as the ``ScheduleInfo`` that events carry."""
        return ScheduleInfo(
            total_steps=self.total_steps,
            steps_per_epoch=self.steps_per_epoch,
            epochs=self.epochs,
            epoch_starts=tuple(e * self.steps_per_epoch for e in range(self.epochs)),
            evaluations_after=self.evaluations_after,
            checkpoints_after=self.checkpoints_after,
            batch_size=self.batch_size,
            evaluation_batches=self.evaluation_batches,
            eval_batch_size=self.eval_batch_size,
            batch_note=self.batch_note,
        )

    def ending_after(self, step: int) -> Plan:
        """The plan cut short after ``step`` (early stopping, a stop)."""
        total = step + 1
        return dataclasses.replace(
            self,
            total_steps=total,
            epochs=math.ceil(total / self.steps_per_epoch),
            checkpoints_after=tuple(s for s in self.checkpoints_after if s <= step),
            evaluations_after=tuple(s for s in self.evaluations_after if s <= step),
        )


def plan_training(trainer: Mapping[str, Any], rows: int, batch_size: int) -> Plan:
    """Plan a run over ``rows`` training rows.

    From ``epochs`` or ``train_steps``, ``steps_per_checkpoint`` or ``checkpoints_per_epoch``, and
    ``skip_all_evaluation``.
    """
    per_epoch = max(1, math.ceil(rows / batch_size))
    steps = trainer.get("train_steps")
    total = int(steps) if steps else int(trainer.get("epochs") or 100) * per_epoch
    every = int(trainer.get("steps_per_checkpoint") or 0)
    per = int(trainer.get("checkpoints_per_epoch") or 0)
    if per:
        every = max(1, per_epoch // per)
    every = per_epoch if every <= 0 else min(every, per_epoch)
    after = tuple(sorted(set(range(every - 1, total, every)) | {total - 1}))
    evaluations = () if trainer.get("skip_all_evaluation") else after
    return Plan(
        batch_size=batch_size,
        steps_per_epoch=per_epoch,
        total_steps=total,
        epochs=math.ceil(total / per_epoch),
        checkpoint_every=every,
        checkpoints_after=after,
        evaluations_after=evaluations,
    )


class LearningRate:
    """``learning_rate_scheduler``, step for step as Ludwig 0.11's ``LRScheduler``.

    Warm-up (``warmup_fraction`` of the steps or ``warmup_evaluations``, the larger) from 0 up to
    the base rate, then ``decay`` linear / exponential (``decay_rate ** (1 + step /
    decay_steps)``) / cosine (warm restarts every ``t_0`` steps, an evaluation interval by
    default), times ``reduce_on_plateau_rate`` for each reduction that ``reduce_on_plateau``
    allows (torch's ``ReduceLROnPlateau``: more than ``reduce_on_plateau_patience`` evaluations
    without a relative improvement of 1e-4).

    Args:
        base: The base learning rate.
        params: The ``learning_rate_scheduler`` section.
        plan: The training plan (total steps, evaluation cadence).
    """

    def __init__(self, base: float, params: Mapping[str, Any], plan: Plan):
        self.base = base
        self.params = dict(params)
        self.total = plan.total_steps
        warm_evals = int(params.get("warmup_evaluations") or 0)
        self.warmup = max(
            float(params.get("warmup_fraction") or 0.0) * plan.total_steps,
            float(warm_evals * plan.checkpoint_every),
        )
        self.every = plan.checkpoint_every
        self.factor = 1.0
        self.reductions = 0
        self.best: float | None = None
        self.stale = 0
        #: (step, extra factor): Ludwig applies a new reduction once more to the next step's rate
        self.once: tuple[int, float] | None = None

    def at(self, step: int) -> float:
        """Learning rate for ``step`` (0-based)."""
        extra = self.once[1] if self.once is not None and self.once[0] == step else 1.0
        if step < self.warmup:
            return self.base * self.factor * extra * step / max(1.0, self.warmup)
        # torch's SequentialLR starts the decay at the first whole step past the warm-up
        return self.base * self.factor * extra * self._decay(step - math.ceil(self.warmup))

    def _decay(self, step: int) -> float:
        kind = self.params.get("decay")
        if kind == "linear":
            span = self.total - self.warmup
            return max(0.0, (span - step) / max(1.0, span))
        if kind == "exponential":
            exponent = 1 + step / float(self.params.get("decay_steps") or 10000)
            if self.params.get("staircase"):
                exponent = math.ceil(exponent)
            rate: float = float(self.params.get("decay_rate", 0.96)) ** exponent
            return rate
        if kind == "cosine":
            period = int(self.params.get("t_0") or self.every or 1)
            mult = int(self.params.get("t_mult") or 1)
            while step >= period:
                step -= period
                period *= mult
            floor = float(self.params.get("eta_min") or 0.0) / max(self.base, 1e-12)
            return floor + (1 - floor) * (1 + math.cos(math.pi * step / period)) / 2
        return 1.0

    def observe(self, value: float, minimize: bool, step: int | None = None) -> bool:
        """Feed the plateau metric after the evaluation that follows ``step``.

        True when the rate was reduced.
        """
        allowed = int(self.params.get("reduce_on_plateau") or 0)
        if allowed <= 0 or self.reductions >= allowed:
            return False
        if self._improves(value, minimize):
            self.best, self.stale = value, 0
            return False
        self.stale += 1
        if self.stale <= int(self.params.get("reduce_on_plateau_patience") or 10):
            return False
        previous = self.factor
        self.factor *= float(self.params.get("reduce_on_plateau_rate") or 0.1)
        self.reductions, self.stale = self.reductions + 1, 0
        if step is not None:
            self.once = (step + 1, previous)
        return True

    def _improves(self, value: float, minimize: bool) -> bool:
        """Torch's ``ReduceLROnPlateau`` test: a relative threshold of 1e-4, as torch writes it."""
        if self.best is None:
            return not math.isnan(value)
        return value < self.best * (1 - 1e-4) if minimize else value > self.best * (1 + 1e-4)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's mutable state, for a checkpoint."""
        return {
            "factor": self.factor,
            "reductions": self.reductions,
            "best": self.best,
            "stale": self.stale,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state from a checkpoint.

        Raises:
            KeyError: A key is missing from ``state``.
        """
        self.factor = float(state["factor"])
        self.reductions = int(state["reductions"])
        self.best = state["best"]
        self.stale = int(state["stale"])
