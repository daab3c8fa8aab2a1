"""The trivial baseline: majority class / training mean, scored on every split."""

import math

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data.baseline import trivial_baseline

CONFIG = {
    "output_features": [
        {"name": "churn", "type": "binary"},
        {"name": "kind", "type": "category"},
        {"name": "price", "type": "number"},
        {"name": "review", "type": "text"},
    ]
}


def _frames():
    training = pd.DataFrame(
        {
            "churn": ["no", "no", "no", "yes", None],
            "kind": ["a", "b", "b", "c", "b"],
            "price": [1.0, 2.0, 3.0, 6.0, np.nan],
            "review": ["x"] * 5,
        }
    )
    test = pd.DataFrame(
        {"churn": ["yes", "no"], "kind": ["a", "a"], "price": [4.0, 2.0], "review": ["y", "z"]}
    )
    return {"training": training, "test": test}


def test_majority_class_and_mean_come_from_the_training_split_only():
    metrics, predictors = trivial_baseline(CONFIG, _frames())
    assert predictors == {
        "churn": "always 'no'",
        "kind": "always 'b'",
        "price": "always the mean 3",
        "review": "always 'x'",
    }
    assert metrics["training"]["churn"]["accuracy"] == pytest.approx(3 / 4)  # missing left out
    assert metrics["test"]["churn"] == {"accuracy": 0.5, "roc_auc": 0.5}
    # category accuracy is averaged over the classes seen, as the engines and Ludwig report it
    assert metrics["test"]["kind"] == {"accuracy": 0.0, "accuracy_micro": 0.0}
    training_kind = metrics["training"]["kind"]  # a, b, b, c, b: always 'b'
    assert training_kind == {"accuracy": pytest.approx(1 / 3), "accuracy_micro": 0.6}
    price = metrics["test"]["price"]
    assert price["mean_absolute_error"] == pytest.approx(1.0)
    assert price["root_mean_squared_error"] == pytest.approx(1.0)
    assert price["r2"] == pytest.approx(1 - 2 / 2)  # the test split's own mean is 3 too
    assert metrics["training"]["review"] == {"sequence_accuracy": 1.0}
    assert metrics["test"]["review"] == {"sequence_accuracy": 0.0}  # an LLM's answer, exactly


def test_ties_pick_the_first_label_by_name_and_odd_columns_are_left_out():
    frames = {"training": pd.DataFrame({"churn": ["yes", "no"], "price": ["n/a", None]})}
    metrics, predictors = trivial_baseline(CONFIG, frames)
    assert predictors == {"churn": "always 'no'"}
    assert math.isclose(metrics["training"]["churn"]["accuracy"], 0.5)
