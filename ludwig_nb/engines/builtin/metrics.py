"""Evaluation metrics on whole splits (numpy, data space), Ludwig names.

binary: accuracy, precision, recall, specificity, f1, roc_auc · category: accuracy,
hits_at_k (when there are more classes than ``top_k``) · number: mean_squared_error,
mean_absolute_error, root_mean_squared_error, r2 · set: jaccard · vector:
mean_squared_error, mean_absolute_error, r2. ``loss`` is added by the evaluator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["DEFAULT_VALIDATION_METRIC", "MINIMIZE", "feature_metrics", "is_improvement", "roc_auc"]

DEFAULT_VALIDATION_METRIC = {
    "binary": "roc_auc",
    "category": "accuracy",
    "number": "mean_squared_error",
    "set": "jaccard",
    "vector": "mean_squared_error",
}
#: metrics where lower is better
MINIMIZE = frozenset(
    {"loss", "mean_squared_error", "mean_absolute_error", "root_mean_squared_error"}
)


def is_improvement(metric: str, value: float, best: float | None) -> bool:
    """True when ``value`` beats ``best`` for ``metric`` (None: nothing yet)."""
    if best is None or np.isnan(best):
        return not np.isnan(value)
    return value < best if metric in MINIMIZE else value > best


def roc_auc(target: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve (ties averaged); NaN when only one class is present."""
    target = target.astype(bool)
    positives, negatives = int(target.sum()), int((~target).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score), dtype=np.float64)
    sorted_scores = score[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[target].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def _safe_div(a: float, b: float) -> float:
    return float(a / b) if b else 0.0


def _binary(target: np.ndarray, prob: np.ndarray, threshold: float) -> dict[str, float]:
    t = target.astype(bool)
    p = prob >= threshold
    tp, tn = float((p & t).sum()), float((~p & ~t).sum())
    fp, fn = float((p & ~t).sum()), float((~p & t).sum())
    precision, recall = _safe_div(tp, tp + fp), _safe_div(tp, tp + fn)
    return {
        "accuracy": _safe_div(tp + tn, len(t)),
        "precision": precision,
        "recall": recall,
        "specificity": _safe_div(tn, tn + fp),
        "f1": _safe_div(2 * precision * recall, precision + recall),
        "roc_auc": roc_auc(t, prob),
    }


def _regression(target: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    err = pred - target
    mse = float(np.mean(err**2))
    var = float(np.sum((target - target.mean()) ** 2))
    return {
        "mean_squared_error": mse,
        "mean_absolute_error": float(np.mean(np.abs(err))),
        "root_mean_squared_error": float(np.sqrt(mse)),
        "r2": 1.0 - float(np.sum(err**2)) / var if var else 0.0,
    }


def feature_metrics(
    kind: str, target: np.ndarray, output: np.ndarray, feature: Mapping[str, Any]
) -> dict[str, float]:
    """Metrics for one output feature.

    ``output``: probabilities (binary ``[n]``, category/set ``[n, classes]``) or values in data
    space (number, vector).
    """
    if kind == "binary":
        return _binary(target, output, float(feature.get("threshold") or 0.5))
    if kind == "category":
        known = target >= 0
        top = np.argsort(-output, axis=1)
        result = {"accuracy": float(np.mean(top[:, 0] == target)) if len(target) else 0.0}
        k = int(feature.get("top_k") or 3)
        if output.shape[1] > k:
            hits = (top[:, :k] == target[:, None]).any(axis=1) & known
            result["hits_at_k"] = float(np.mean(hits))
        return result
    if kind == "set":
        pred = output >= float(feature.get("threshold") or 0.5)
        truth = target >= 0.5
        union = (pred | truth).sum(axis=1)
        inter = (pred & truth).sum(axis=1)
        return {"jaccard": float(np.mean(np.where(union > 0, inter / np.maximum(union, 1), 1.0)))}
    if kind == "vector":
        out = _regression(target.ravel(), output.ravel())
        del out["root_mean_squared_error"]
        return out
    return _regression(target, output)
