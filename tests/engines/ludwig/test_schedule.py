"""Ludwig's trainer plan in our terms (no Ludwig needed)."""

from __future__ import annotations

from ludwig_nb.engines.ludwig.schedule import (
    final_steps_per_checkpoint,
    ludwig_schedule,
    plan_from_config,
)


def test_final_steps_per_checkpoint_follows_ludwig():
    assert final_steps_per_checkpoint(55, 0, 0, 110) == 55  # once an epoch
    assert final_steps_per_checkpoint(55, 20, 0, 110) == 20
    assert final_steps_per_checkpoint(55, 200, 0, 110) == 55  # capped at an epoch
    assert final_steps_per_checkpoint(55, 0, 2, 110) == 27  # int(55 / 2)
    assert final_steps_per_checkpoint(55, 0, 0, 30) == 30  # capped at the total


def test_evaluations_every_n_steps_and_checkpoints_at_epoch_ends_too():
    s = ludwig_schedule(
        total_steps=110, steps_per_epoch=55, every=20, batch_size=64, evaluation_batches=3
    )
    assert s.evaluations_after == (19, 39, 59, 79, 99)
    assert s.checkpoints_after == (19, 39, 54, 59, 79, 99, 109)
    assert (s.epochs, s.epoch_starts, s.evaluation_batches) == (2, (0, 55), 3)


def test_plan_from_config_uses_the_rendered_trainer():
    config = {"trainer": {"epochs": 3, "batch_size": 64, "steps_per_checkpoint": 0}}
    s = plan_from_config(config, rows=3500)
    assert (s.steps_per_epoch, s.total_steps, s.evaluations_after) == (55, 165, (54, 109, 164))
    skip = plan_from_config({"trainer": {"train_steps": 10, "skip_all_evaluation": True}}, 500)
    assert (s.batch_size, skip.total_steps, skip.evaluations_after) == (64, 10, ())
