"""The curve data a dashboard draws, built from events; no widgets (pure, bounded memory).

Five curves: the training loss of every step, raw and smoothed (an exponential moving
average over a window of about 1 % of the run, as TensorBoard draws it), and at every
evaluation the loss and the charted metric (chosen by
:func:`~ludwig_nb.ui.formatting.pick_metric`) of the training and validation splits.
The per-step loss goes into a :class:`MinMaxSeries`, so a million-step run keeps at most
``max_points`` points; evaluations are few and are kept too (bounded the same way).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.downsample import MinMaxSeries
from ludwig_nb.ui.formatting import pick_metric

__all__ = ["SMOOTHED", "X_AXES", "Curve", "CurveData"]

Curve = tuple[list[float], list[float]]

#: the name of the smoothed training-loss curve
SMOOTHED = "train (smoothed)"
#: what the x axis can show: steps done, epochs (fractional) or elapsed seconds
X_AXES = ("step", "epoch", "time")
_CLOCK_POINTS = 2000  # (step, elapsed) pairs kept to map steps to time


def _metric(metrics: Mapping[str, Any], split: str, feature: str, name: str) -> float | None:
    value = metrics.get(split, {}).get(feature, {}).get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class CurveData:
    """Accumulates the curves; :attr:`version` changes whenever a curve changed.

    ``x`` is the number of steps done (``step + 1``), so curves line up with the progress.

    Args:
        max_points: Points kept per curve (see :class:`~ludwig_nb.core.downsample.MinMaxSeries`).
    """

    def __init__(self, max_points: int = 1000) -> None:
        self.train_loss = MinMaxSeries(max_points)
        self.train_smooth = MinMaxSeries(max_points)
        self._ema: tuple[float, int] = (0.0, 0)  # (biased average, points folded in)
        self._span = 20.0
        self.steps_per_epoch = 0
        self.started_at: float | None = None
        self._clock: list[tuple[int, float]] = []  # (steps done, seconds since start)
        self._clock_stride = 1
        self.eval_loss: dict[str, MinMaxSeries] = {}
        self.eval_metric: dict[str, MinMaxSeries] = {}
        self.metric: tuple[str, str] | None = None  # (output feature, metric name)
        self._loss_feature = "combined"
        self._max_points = max_points
        self.version = 0

    def observe(self, event: ev.Event) -> None:
        """Add a step's loss, an evaluation's losses and metric, or the run's schedule."""
        if isinstance(event, ev.StepFinished):
            if event.loss is not None:  # engines without a per-step loss leave no gap
                self.train_loss.append(event.step + 1, event.loss)
                self._smooth(event.step + 1, event.loss)
            self._tick(event.step + 1, event.time)
            self.version += 1
        elif isinstance(event, ev.EvaluationFinished):
            self._observe_evaluation(event)
        elif isinstance(event, ev.RunStarted):
            schedule = event.schedule
            self.steps_per_epoch = schedule.steps_per_epoch
            self._span = min(500.0, max(10.0, schedule.total_steps / 100))
            if self.started_at is None:
                self.started_at = event.time

    def _smooth(self, x: int, loss: float) -> None:
        if not math.isfinite(loss):
            return
        weight = 1.0 - 2.0 / (self._span + 1.0)
        average, count = self._ema
        average, count = average * weight + (1 - weight) * loss, count + 1
        self._ema = (average, count)
        self.train_smooth.append(x, average / (1 - weight**count))  # debiased

    def _tick(self, steps: int, time: float) -> None:
        if self.started_at is None:
            self.started_at = time
        if steps % self._clock_stride:
            return
        self._clock.append((steps, time - self.started_at))
        if len(self._clock) >= _CLOCK_POINTS:  # keep every other point, sample half as often
            self._clock = self._clock[::2]
            self._clock_stride *= 2

    def x_mapper(self, axis: str) -> Callable[[float], float]:
        """Steps done -> the ``axis`` unit (``"step"``, ``"epoch"``, ``"time"`` seconds)."""
        if axis == "epoch" and self.steps_per_epoch:
            per = float(self.steps_per_epoch)
            return lambda x: x / per
        if axis == "time" and self._clock:
            steps = [s for s, _ in self._clock]
            seconds = [t for _, t in self._clock]
            return lambda x: _interpolate(steps, seconds, x)
        return lambda x: x

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
        """The watched metric's label: ``"<feature> <metric>"``, or the metric for ``combined``."""
        if self.metric is None:
            return "validation metric"
        feature, name = self.metric
        return name if feature == "combined" else f"{feature} {name}"

    def loss_curves(self, axis: str = "step") -> dict[str, Curve]:
        """The loss curves to draw, in drawing order.

        ``{"train": raw, "train (smoothed)": EMA, "validation": …}`` with x in ``axis`` units, drawn
        in this order (evaluations on top); empty curves left out.
        """
        curves: dict[str, Curve] = {}
        if self.train_loss.count:
            curves["train"] = self.train_loss.points()
            curves[SMOOTHED] = self.train_smooth.points()
        for split, series in self.eval_loss.items():
            if series.count and split != "training":
                curves[split] = series.points()
        return self._mapped(curves, axis)

    def metric_curves(self, axis: str = "step") -> dict[str, Curve]:
        """``{split: curve}`` of the charted metric (training, validation, test)."""
        curves = {s: series.points() for s, series in self.eval_metric.items() if series.count}
        return self._mapped(curves, axis)

    def _mapped(self, curves: dict[str, Curve], axis: str) -> dict[str, Curve]:
        if axis == "step":
            return curves
        to_x = self.x_mapper(axis)
        return {name: ([to_x(x) for x in xs], ys) for name, (xs, ys) in curves.items()}


def _interpolate(xs: list[int], ys: list[float], x: float) -> float:
    """Piecewise-linear ``y(x)`` over increasing ``xs``; extrapolates at the last slope."""
    if len(xs) == 1:
        return ys[0] * x / xs[0] if xs[0] else ys[0]
    i = min(max(1, bisect.bisect_left(xs, x)), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    if x <= xs[0]:
        x0, x1, y0, y1 = 0, xs[0], 0.0, ys[0]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 != x0 else y0
