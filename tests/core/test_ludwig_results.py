"""Ludwig 0.11's result shapes, field by field, from events."""

from __future__ import annotations

import math

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core import ludwig_results as lr


def _evaluation(step: int, value: float, improved: bool, test: bool = True) -> ev.Event:
    metrics = {
        "training": {"y": {"loss": value}, "combined": {"loss": value}},
        "validation": {"y": {"loss": value, "accuracy": 1 - value}, "combined": {"loss": value}},
    }
    if test:
        metrics["test"] = {
            "y": {"loss": value + 0.1, "accuracy": 0.9 - value},
            "combined": {"loss": value + 0.1},
        }
    return ev.EvaluationFinished(
        time=float(step),
        step=step,
        epoch=step // 10,
        start_time=float(step),
        metrics=metrics,
        improved=improved,
    )


def test_training_statistics_has_exactly_ludwigs_keys_and_one_value_per_evaluation() -> None:
    events = [_evaluation(9, 0.5, True), _evaluation(19, 0.3, True), _evaluation(29, 0.4, False)]
    stats = lr.training_statistics(events, {"epochs": 3})
    assert set(stats) == {"training", "validation", "test", "evaluation_frequency"}
    assert stats["evaluation_frequency"] == {"frequency": 1.0, "period": "epoch"}
    assert stats["training"] == {
        "combined": {"loss": [0.5, 0.3, 0.4]},
        "y": {"loss": [0.5, 0.3, 0.4]},
    }
    assert stats["validation"]["y"]["accuracy"] == [0.5, 0.7, 0.6]
    assert stats["test"]["combined"]["loss"] == [0.6, 0.4, 0.5]


def test_a_metric_missing_from_one_evaluation_keeps_the_lists_aligned() -> None:
    events = [_evaluation(9, 0.5, True, test=False), _evaluation(19, math.nan, False)]
    stats = lr.training_statistics(events, {})
    assert stats["test"]["y"]["loss"] == [None, None]  # no test split at step 9; NaN at 19
    assert stats["validation"]["y"]["loss"] == [0.5, None]


def test_evaluation_frequency_follows_ludwigs_rule() -> None:
    by_steps = lr.evaluation_frequency({"steps_per_checkpoint": 50})
    assert by_steps == {"frequency": 50.0, "period": "step"}
    by_epoch = lr.evaluation_frequency({"checkpoints_per_epoch": 4})
    assert by_epoch == {"frequency": 0.25, "period": "epoch"}


def test_test_statistics_are_the_best_evaluations_test_split() -> None:
    events = [_evaluation(9, 0.5, True), _evaluation(19, 0.3, True), _evaluation(29, 0.4, False)]
    stats = lr.test_statistics(events)
    assert stats == {
        "y": {"loss": pytest.approx(0.4), "accuracy": pytest.approx(0.6)},
        "combined": {"loss": pytest.approx(0.4)},
    }  # step 19: the last improvement
    assert lr.test_statistics([_evaluation(9, 0.5, True, test=False)]) is None


def test_description_has_ludwigs_keys() -> None:
    desc = lr.description(
        {"input_features": []},
        versions={"ludwig": None, "ludwig_nb": "0.1.0", "torch": "2.13.0"},
        command="ludwig-nb train",
        random_seed=42,
        dataset="data/train.parquet",
        compute={"num_nodes": 1},
    )
    assert list(desc) == [
        "ludwig_version",
        "ludwig_nb_version",
        "command",
        "random_seed",
        "dataset",
        "data_format",
        "config",
        "torch_version",
        "compute",
    ]
    assert desc["data_format"] == "parquet" and desc["compute"] == {"num_nodes": 1}
    frame = lr.description({}, versions={}, command="", random_seed=None, dataset=None, compute={})
    assert frame["data_format"] == "dataframe" and "dataset" not in frame
