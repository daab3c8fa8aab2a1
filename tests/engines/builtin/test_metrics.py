"""Metrics against scikit-learn on the same arrays."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as sk

from ludwig_nb.engines.builtin.metrics import feature_metrics, is_improvement, roc_auc


def test_roc_auc_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    target = rng.integers(0, 2, 300)
    score = np.round(rng.random(300) + 0.3 * target, 1)  # many ties
    assert roc_auc(target, score) == pytest.approx(sk.roc_auc_score(target, score))
    assert np.isnan(roc_auc(np.ones(5), np.arange(5.0)))


def test_binary_metrics_match_sklearn():
    rng = np.random.default_rng(1)
    target = rng.integers(0, 2, 200)
    prob = np.clip(0.6 * target + rng.random(200) * 0.6, 0, 1)
    got = feature_metrics("binary", target, prob, {"threshold": 0.5})
    pred = prob >= 0.5
    assert got["accuracy"] == pytest.approx(sk.accuracy_score(target, pred))
    assert got["precision"] == pytest.approx(sk.precision_score(target, pred))
    assert got["recall"] == pytest.approx(sk.recall_score(target, pred))
    assert got["f1"] == pytest.approx(sk.f1_score(target, pred))


def test_regression_and_category_metrics():
    target = np.array([1.0, 2.0, 3.0, 4.0])
    pred = np.array([1.5, 2.0, 2.5, 5.0])
    got = feature_metrics("number", target, pred, {})
    assert got["mean_squared_error"] == pytest.approx(sk.mean_squared_error(target, pred))
    assert got["mean_absolute_error"] == pytest.approx(sk.mean_absolute_error(target, pred))
    assert got["r2"] == pytest.approx(sk.r2_score(target, pred))
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.05, 0.15, 0.1], [0.3, 0.4, 0.2, 0.1]])
    cat = feature_metrics("category", np.array([3, 1, 0]), probs, {"top_k": 2})
    assert cat["accuracy"] == pytest.approx(1 / 3)
    # top 2 hits rows 0 and 2; averaged over classes 0-3 (class 2 is only guessed): 1, 0, 0, 1
    assert cat["hits_at_k"] == pytest.approx(2 / 4)


def test_jaccard_for_sets():
    target = np.array([[1, 0, 1], [0, 1, 0]], dtype=float)
    probs = np.array([[0.9, 0.1, 0.2], [0.2, 0.8, 0.1]])
    assert feature_metrics("set", target, probs, {})["jaccard"] == pytest.approx((0.5 + 1) / 2)


def test_improvement_direction_per_metric():
    assert is_improvement("loss", 0.4, 0.5) and not is_improvement("loss", 0.6, 0.5)
    assert is_improvement("accuracy", 0.6, 0.5) and not is_improvement("roc_auc", 0.4, 0.5)
    assert is_improvement("accuracy", 0.1, None) and not is_improvement("loss", float("nan"), None)


def test_category_accuracy_is_averaged_over_the_classes_as_ludwig_reports_it():
    target = np.array([0, 0, 0, 0, 1, 2])
    output = np.tile([0.7, 0.0, 0.1, 0.2], (6, 1))  # always class 0; class 3 never seen
    metrics = feature_metrics("category", target, output, {})
    assert metrics["accuracy"] == pytest.approx(1 / 3)  # recalls 1, 0, 0 over classes 0-2
    assert metrics["accuracy_micro"] == pytest.approx(4 / 6)
    # top 3 is classes 0, 3, 2: recalls 1, 0, 1 and 0 for class 3, guessed but never a target
    assert metrics["hits_at_k"] == pytest.approx(2 / 4)
    assert metrics["roc_auc"] == pytest.approx(0.5)  # a constant score ranks nothing
