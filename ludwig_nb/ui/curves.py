"""The curve data a dashboard draws, built from events; no widgets (pure, bounded memory).

Four curves: the training loss of every step, and at every evaluation the loss and the
charted metric (chosen by :func:`~ludwig_nb.ui.formatting.pick_metric`) of the training
and validation splits. The per-step loss goes into a :class:`MinMaxSeries`, so a
million-step run keeps at most ``max_points`` points; evaluations are few and are kept too
(bounded the same way).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.downsample import MinMaxSeries
from ludwig_nb.ui.formatting import pick_metric

__all__ = ["Curve", "CurveData"]

Curve = tuple[list[float], list[float]]


def _metric(metrics: Mapping[str, Any], split: str, feature: str, name: str) -> float | None:
    value = metrics.get(split, {}).get(feature, {}).get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class CurveData:
    """Accumulates the curves; :attr:`version` changes whenever a curve changed.

    ``x`` is the number of steps done (``step + 1``), so curves line up with the progress.
    """

    def __init__(self, max_points: int = 1000) -> None:
        self.train_loss = MinMaxSeries(max_points)
        self.eval_loss: dict[str, MinMaxSeries] = {}
        self.eval_metric: dict[str, MinMaxSeries] = {}
        self.metric: tuple[str, str] | None = None  # (output feature, metric name)
        self._loss_feature = "combined"
        self._max_points = max_points
        self.version = 0

    def observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            if event.loss is not None:  # engines without a per-step loss leave no gap
                self.train_loss.append(event.step + 1, event.loss)
            self.version += 1
        elif isinstance(event, ev.EvaluationFinished):
            self._observe_evaluation(event)

    def _observe_evaluation(self, event: ev.EvaluationFinished) -> None:
        metrics = event.metrics
        if self.metric is None:
            self.metric = pick_metric(metrics)
        for split in metrics:
            loss = _metric(metrics, split, "combined", "loss")
            if loss is None and self.metric is not None:
                loss = _metric(metrics, split, self.metric[0], "loss")
            if loss is not None:
                self._series(self.eval_loss, split).append(event.step + 1, loss)
            if self.metric is not None:
                value = _metric(metrics, split, *self.metric)
                if value is not None:
                    self._series(self.eval_metric, split).append(event.step + 1, value)
        self.version += 1

    def _series(self, table: dict[str, MinMaxSeries], split: str) -> MinMaxSeries:
        if split not in table:
            table[split] = MinMaxSeries(self._max_points)
        return table[split]

    @property
    def metric_label(self) -> str:
        if self.metric is None:
            return "validation metric"
        feature, name = self.metric
        return name if feature == "combined" else f"{feature} {name}"

    def loss_curves(self) -> dict[str, Curve]:
        """``{"train (step)": curve, "validation": curve, ...}``; empty curves left out."""
        curves: dict[str, Curve] = {}
        if self.train_loss.count:
            curves["train"] = self.train_loss.points()
        for split, series in self.eval_loss.items():
            if series.count and split != "training":
                curves[split] = series.points()
        return curves

    def metric_curves(self) -> dict[str, Curve]:
        """``{split: curve}`` of the charted metric (training, validation, test)."""
        return {s: series.points() for s, series in self.eval_metric.items() if series.count}
