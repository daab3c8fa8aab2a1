"""The training plan and the learning-rate schedule."""

from __future__ import annotations

import pytest

from ludwig_nb.engines.builtin.schedule import LearningRate, plan_training


def test_plan_epochs_and_checkpoints():
    plan = plan_training({"epochs": 3}, rows=100, batch_size=32)
    assert (plan.steps_per_epoch, plan.total_steps, plan.epochs) == (4, 12, 3)
    assert plan.checkpoints_after == (3, 7, 11) == plan.evaluations_after
    info = plan.info()
    assert info.epoch_starts == (0, 4, 8) and info.batch_size == 32


def test_plan_train_steps_win_and_steps_per_checkpoint_is_capped():
    plan = plan_training({"epochs": 50, "train_steps": 10, "steps_per_checkpoint": 3}, 40, 10)
    assert (plan.total_steps, plan.epochs) == (10, 3)
    assert plan.checkpoints_after == (2, 5, 8, 9)
    capped = plan_training({"epochs": 1, "steps_per_checkpoint": 99}, 40, 10)
    assert capped.checkpoint_every == 4


def test_plan_ending_after_cuts_the_lists():
    plan = plan_training({"epochs": 5}, 40, 10).ending_after(7)
    assert (plan.total_steps, plan.epochs, plan.checkpoints_after) == (8, 2, (3, 7))
    assert plan.info().epoch_starts == (0, 4)


def test_warmup_then_decay():
    """Ludwig's LambdaLR steps: warm-up from 0, then the decay counted from the warm-up's end."""
    plan = plan_training({"epochs": 10}, 100, 10)  # 100 steps
    lr = LearningRate(1.0, {"warmup_fraction": 0.1, "decay": "linear"}, plan)
    assert lr.at(0) == 0.0 and lr.at(5) == pytest.approx(0.5) and lr.at(10) == pytest.approx(1.0)
    assert lr.at(55) == pytest.approx(0.5)  # (100 - 10 - 45) / 90
    exp = LearningRate(1.0, {"decay": "exponential", "decay_rate": 0.5, "decay_steps": 10}, plan)
    assert exp.at(0) == pytest.approx(0.5) and exp.at(20) == pytest.approx(0.125)
    stair = {"decay": "exponential", "decay_rate": 0.5, "decay_steps": 10, "staircase": True}
    assert LearningRate(1.0, stair, plan).at(15) == pytest.approx(0.125)  # 0.5 ** ceil(2.5)
    cos = LearningRate(1.0, {"decay": "cosine", "t_0": 10}, plan)
    assert cos.at(0) == pytest.approx(1.0) and cos.at(5) == pytest.approx(0.5)
    assert cos.at(10) == pytest.approx(1.0)  # restart


def test_reduce_on_plateau_after_patience_and_state_round_trip():
    plan = plan_training({"epochs": 1}, 10, 10)
    params = {
        "reduce_on_plateau": 1,
        "reduce_on_plateau_patience": 2,
        "reduce_on_plateau_rate": 0.1,
    }
    lr = LearningRate(1.0, params, plan)
    # torch's ReduceLROnPlateau: reduced once more than `patience` evaluations did not improve
    seen = [lr.observe(v, minimize=True) for v in (1.0, 1.1, 1.2, 1.3)]
    assert seen == [False, False, False, True]
    assert lr.at(0) == pytest.approx(0.1)
    assert [lr.observe(v, minimize=True) for v in (2.0, 3.0, 4.0)] == [False] * 3  # used up
    again = LearningRate(1.0, params, plan)
    again.load_state_dict(lr.state_dict())
    assert again.at(0) == pytest.approx(0.1)
