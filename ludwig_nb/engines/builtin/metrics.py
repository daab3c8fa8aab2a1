"""Evaluation metrics on whole splits (numpy, data space), Ludwig names.

binary: accuracy, precision, recall, specificity, f1, roc_auc · category: accuracy (averaged
over the classes, as Ludwig's torchmetrics ``MulticlassAccuracy`` averages it: the mean recall
of the classes present), accuracy_micro (the share of rows right), roc_auc (one class against the
rest, averaged), hits_at_k (when there are more classes than ``top_k``; averaged over the
classes like accuracy) · number: mean_squared_error,
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


def _macro_accuracy(target: np.ndarray, top: np.ndarray, classes: int) -> float:
    """The macro ``MulticlassAccuracy``: the mean recall of the classes seen.

    ``top`` holds each row's predicted classes (rows × k, best first); a row counts for its class
    when that class is among them (k = 1: accuracy, k > 1: hits at k). A class that is neither a
    target nor among any row's predictions is left out; rows whose target is unknown (-1) are not
    counted.
    """
    known = target >= 0
    t, p = target[known], top[known]
    hit = (p == t[:, None]).any(axis=1)
    tp = np.bincount(t[hit], minlength=classes)[:classes].astype(np.float64)
    support = np.bincount(t, minlength=classes)[:classes].astype(np.float64)
    guessed = np.bincount(p.ravel(), minlength=classes)[:classes].astype(np.float64)
    seen = (support + guessed) > 0
    if not seen.any():
        return 0.0
    recall = np.divide(tp, support, out=np.zeros(classes), where=support > 0)
    return float(recall[seen].mean())


def _category(target: np.ndarray, output: np.ndarray, k: int) -> dict[str, float]:
    classes = output.shape[1]
    top = np.argsort(-output, axis=1)
    rows = len(target)
    result = {
        "accuracy": _macro_accuracy(target, top[:, :1], classes) if rows else 0.0,
        "accuracy_micro": float(np.mean(top[:, 0] == target)) if rows else 0.0,
    }
    per_class = [roc_auc(target == c, output[:, c]) for c in range(classes)]
    finite = [v for v in per_class if not np.isnan(v)]
    result["roc_auc"] = float(np.mean(finite)) if finite else float("nan")
    if classes > k:  # averaged over the classes too, as Ludwig's HitsAtKMetric is
        result["hits_at_k"] = _macro_accuracy(target, top[:, :k], classes) if rows else 0.0
    return result


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
        return _category(target, output, int(feature.get("top_k") or 3))
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
