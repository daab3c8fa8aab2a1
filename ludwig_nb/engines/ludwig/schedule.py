"""Ludwig's training plan in our terms (pure: no Ludwig import).

Ludwig 0.11's trainer evaluates after every ``steps_per_checkpoint`` steps (the "final" one:
``checkpoints_per_epoch`` turned into steps, capped at an epoch) and saves a checkpoint after
each evaluation and at each epoch's end (``trainers/trainer.py`` ``_train_loop``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.events import ScheduleInfo

__all__ = ["final_steps_per_checkpoint", "ludwig_schedule", "plan_from_config"]


def final_steps_per_checkpoint(
    steps_per_epoch: int, steps_per_checkpoint: int, checkpoints_per_epoch: float, total: int
) -> int:
    """Ludwig's ``get_final_steps_per_checkpoint``, capped at ``total`` steps as its trainer does.

    At least 1.
    """
    every = steps_per_checkpoint
    if checkpoints_per_epoch:
        every = int(steps_per_epoch / checkpoints_per_epoch)
    if every <= 0 or every > steps_per_epoch:
        every = steps_per_epoch
    return max(1, min(every, total))


def ludwig_schedule(
    *,
    total_steps: int,
    steps_per_epoch: int,
    every: int,
    batch_size: int,
    evaluation_batches: int = 0,
    evaluate: bool = True,
    eval_batch_size: int = 0,
) -> ScheduleInfo:
    """The schedule of a Ludwig run: ``every`` is the final steps per checkpoint."""
    per_epoch = max(1, steps_per_epoch)
    epochs = math.ceil(total_steps / per_epoch) if total_steps else 0
    evaluations = tuple(s - 1 for s in range(every, total_steps + 1, every)) if evaluate else ()
    epoch_ends = {min(e * per_epoch, total_steps) - 1 for e in range(1, epochs + 1)}
    return ScheduleInfo(
        total_steps=total_steps,
        steps_per_epoch=per_epoch,
        epochs=epochs,
        epoch_starts=tuple(e * per_epoch for e in range(epochs)),
        evaluations_after=evaluations,
        checkpoints_after=tuple(sorted(set(evaluations) | epoch_ends)),
        batch_size=batch_size,
        evaluation_batches=evaluation_batches if evaluate else 0,
        eval_batch_size=eval_batch_size,
    )


def plan_from_config(config: Mapping[str, Any], rows: int) -> ScheduleInfo:
    """The schedule Ludwig will follow for ``config`` over ``rows`` training rows.

    An ``auto`` batch size plans with Ludwig's CPU cap, 128.
    """
    trainer = dict(config.get("trainer") or {})
    size = trainer.get("batch_size")
    batch_size = int(size) if isinstance(size, int) and size > 0 else 128
    per_epoch = max(1, math.ceil(rows / batch_size))
    steps = trainer.get("train_steps")
    total = int(steps) if steps else int(trainer.get("epochs") or 100) * per_epoch
    every = final_steps_per_checkpoint(
        per_epoch,
        int(trainer.get("steps_per_checkpoint") or 0),
        float(trainer.get("checkpoints_per_epoch") or 0),
        total,
    )
    return ludwig_schedule(
        total_steps=total,
        steps_per_epoch=per_epoch,
        every=every,
        batch_size=batch_size,
        evaluate=not trainer.get("skip_all_evaluation"),
    )
