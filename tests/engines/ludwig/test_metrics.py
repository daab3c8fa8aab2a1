"""Ludwig's progress-tracker metrics reshaped to our events' shape (no Ludwig needed)."""

from __future__ import annotations

import collections
import math
import types

from ludwig_nb.engines.ludwig.metrics import metrics_at, scalar_metrics

TrainerMetric = collections.namedtuple("TrainerMetric", ["epoch", "step", "value"])


def _tracker():
    return types.SimpleNamespace(
        train_metrics={
            "y": {"loss": [TrainerMetric(1, 10, 0.5), TrainerMetric(2, 20, 0.4)]},
            "combined": {"loss": [TrainerMetric(1, 10, 0.5)]},
        },
        validation_metrics={
            "y": {"accuracy": [TrainerMetric(1, 10, 0.8), TrainerMetric(2, 20, math.nan)]}
        },
        test_metrics={},
    )


def test_latest_values_per_split_with_our_split_names():
    assert metrics_at(_tracker()) == {
        "training": {"y": {"loss": 0.4}, "combined": {"loss": 0.5}},
    }  # the NaN accuracy is dropped, and with it the empty validation split


def test_values_at_a_step():
    assert metrics_at(_tracker(), 10) == {
        "training": {"y": {"loss": 0.5}, "combined": {"loss": 0.5}},
        "validation": {"y": {"accuracy": 0.8}},
    }


def test_scalar_metrics_drop_matrices_and_flags():
    stats = {
        "y": {"accuracy": 0.9, "confusion_matrix": [[1, 2], [3, 4]], "flag": True},
        "combined": {"loss": 0.3},
        "note": "text",
    }
    assert scalar_metrics(stats) == {"y": {"accuracy": 0.9}, "combined": {"loss": 0.3}}
