"""Ludwig's metrics in our shape (pure: no Ludwig import).

Ludwig's progress tracker keeps ``{feature | "combined": {metric: [TrainerMetric(epoch, step,
value), ...]}}`` per split (``train_metrics``, ``validation_metrics``, ``test_metrics``);
our events carry ``{split: {feature | "combined": {metric: value}}}`` with Ludwig's split
names ``training``, ``validation``, ``test``, finite values only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["SPLITS", "metrics_at", "scalar_metrics"]

#: progress-tracker attribute -> our split name
SPLITS = {"train_metrics": "training", "validation_metrics": "validation", "test_metrics": "test"}

Metrics = dict[str, dict[str, dict[str, float]]]


def _value(entry: Any) -> tuple[int | None, float | None]:
    """(step, value) of one TrainerMetric (a namedtuple) or a bare number."""
    step = getattr(entry, "step", None)
    value = getattr(entry, "value", entry)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return step, None
    return step, number if math.isfinite(number) else None


def metrics_at(tracker: Any, step: int | None = None) -> Metrics:
    """Every split's metrics from ``tracker`` (a Ludwig ``ProgressTracker``).

    The entries recorded at ``step`` (Ludwig's 1-based step count), or the latest ones when None.
    """
    out: Metrics = {}
    for attribute, split in SPLITS.items():
        table = getattr(tracker, attribute, None) or {}
        features: dict[str, dict[str, float]] = {}
        for feature, per_metric in table.items():
            values: dict[str, float] = {}
            for metric, series in (per_metric or {}).items():
                entries = list(series or [])
                if step is not None:
                    entries = [e for e in entries if _value(e)[0] == step]
                if entries:
                    value = _value(entries[-1])[1]
                    if value is not None:
                        values[str(metric)] = value
            if values:
                features[str(feature)] = values
        if features:
            out[split] = features
    return out


def scalar_metrics(stats: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Keep the scalar entries of ``LudwigModel.evaluate``'s statistics.

    ``LudwigModel.evaluate``'s statistics, ``{feature: {metric: number}}``, without the non-scalar
    entries (confusion matrices, per-class statistics, ROC curves).
    """
    out: dict[str, dict[str, float]] = {}
    for feature, per_metric in stats.items():
        if not isinstance(per_metric, Mapping):
            continue
        values = {}
        for metric, value in per_metric.items():
            _, number = _value(value) if isinstance(value, int | float) else (None, None)
            if number is not None and not isinstance(value, bool):
                values[str(metric)] = number
        if values:
            out[str(feature)] = values
    return out
