"""The trivial baseline a model must beat, computed from the training split's targets.

For every binary or category output the baseline always predicts the training split's most
frequent value; for every number output it always predicts the training mean; for every
text output (an LLM's answer) it always answers the training split's most frequent answer.
Its metrics are scored on every split with the names the engines use (``accuracy``,
``roc_auc``, ``mean_absolute_error``, ``root_mean_squared_error``, ``mean_squared_error``,
``r2``, ``sequence_accuracy``: the share of rows answered exactly), so a summary can put
"accuracy 0.94 · always 'no': 0.86" side by side. Other output types (set, sequence, vector)
get no baseline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.missing import is_missing

__all__ = ["Baseline", "table_baseline", "trivial_baseline"]

#: ``(metrics {split: {feature: {metric: value}}}, predictors {feature: "always 'no'"})``
Baseline = tuple[dict[str, dict[str, dict[str, float]]], dict[str, str]]


def _present(frame: pd.DataFrame, column: str) -> pd.Series:
    series = frame[column]
    return series[~is_missing(series)]


def _majority(train: pd.Series) -> str | None:
    counts = train.map(str).value_counts()
    if counts.empty:
        return None
    top = counts.max()
    return min(str(label) for label, n in counts.items() if n == top)  # ties: first by name


def _class_metrics(values: pd.Series, majority: str, kind: str) -> dict[str, float]:
    """Accuracy as the engines (and Ludwig) define it, for a constant prediction.

    Binary: the share of rows right. Category: averaged over the classes seen (the targets' and
    the predicted one), so always one class scores 1 / that count when it is among the targets;
    ``accuracy_micro`` is the share of rows right.
    """
    if values.empty:
        return {}
    labels = values.map(str).to_numpy()
    share = float(np.mean(labels == majority))
    if kind == "binary":
        return {"accuracy": share, "roc_auc": 0.5}  # a constant score ranks nothing above
    seen = set(labels) | {majority}
    macro = (1.0 if majority in set(labels) else 0.0) / len(seen)
    return {"accuracy": macro, "accuracy_micro": share}


def _number_metrics(values: pd.Series, mean: float) -> dict[str, float]:
    numbers = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    if numbers.size == 0:
        return {}
    err = numbers - mean
    mse = float(np.mean(err**2))
    total = float(np.sum((numbers - numbers.mean()) ** 2))
    metrics = {
        "mean_absolute_error": float(np.mean(np.abs(err))),
        "mean_squared_error": mse,
        "root_mean_squared_error": math.sqrt(mse),
    }
    if total > 0:
        metrics["r2"] = 1.0 - float(np.sum(err**2)) / total
    return metrics


def _feature_baseline(
    feature: Mapping[str, Any], frames: Mapping[str, pd.DataFrame]
) -> tuple[str, dict[str, dict[str, float]]] | None:
    """``(predictor text, {split: metrics})`` for one output feature, or None."""
    kind = feature.get("type")
    column = str(feature.get("column") or feature["name"])
    if "training" not in frames or column not in frames["training"].columns:
        return None
    train = _present(frames["training"], column)
    scored: dict[str, dict[str, float]] = {}
    if kind in ("binary", "category"):
        majority = _majority(train)
        if majority is None:
            return None
        for split, frame in frames.items():
            if column in frame.columns:
                scored[split] = _class_metrics(_present(frame, column), majority, kind)
        return f"always {majority!r}", scored
    if kind == "text":
        majority = _majority(train)
        if majority is None:
            return None
        for split, frame in frames.items():
            if column in frame.columns:
                values = _present(frame, column).map(str).to_numpy()
                if values.size:
                    scored[split] = {"sequence_accuracy": float(np.mean(values == majority))}
        return f"always {majority!r}", scored
    if kind == "number":
        numbers = pd.to_numeric(train, errors="coerce").dropna()
        if numbers.empty:
            return None
        mean = float(numbers.mean())
        for split, frame in frames.items():
            if column in frame.columns:
                scored[split] = _number_metrics(_present(frame, column), mean)
        return f"always the mean {mean:.4g}", scored
    return None


def trivial_baseline(config: Mapping[str, Any], frames: Mapping[str, pd.DataFrame]) -> Baseline:
    """The baseline of every output of ``config`` over ``frames`` ({split: frame}).

    The predictor comes from ``frames["training"]`` only; every split is scored with it.
    Missing target cells are left out. Never raises for odd data: an output it cannot
    score is left out of the result.
    """
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    predictors: dict[str, str] = {}
    for feature in config.get("output_features") or []:
        found = _feature_baseline(feature, frames)
        if found is None:
            continue
        predictor, scored = found
        predictors[str(feature["name"])] = predictor
        for split, values in scored.items():
            if values:
                metrics.setdefault(split, {})[str(feature["name"])] = values
    return metrics, predictors


def table_baseline(config: Mapping[str, Any], loaded: Any, seed: int) -> Baseline:
    """:func:`trivial_baseline` of a loaded dataset.

    Its splits as given (a dict of frames), or cut from one table with ``seed`` exactly as
    the built-in engine cuts them.
    """
    from ludwig_nb.data.splits import split_dataset

    if isinstance(loaded, dict):
        return trivial_baseline(config, dict(loaded))
    return trivial_baseline(config, split_dataset(loaded, config.get("preprocessing") or {}, seed))
