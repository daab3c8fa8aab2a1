"""Early stopping, told honestly: where a run will likely stop, and why it stopped.

With ``trainer.early_stop: P`` a run ends once P evaluations in a row bring no improvement
of the validation metric, so its planned total is an upper bound. :func:`forecast_stop`
predicts the likely stop from the validation curve so far: it fits a saturating curve
``c + a·exp(-step/tau)`` to the running best, measures the evaluation noise around it, and
finds the step after which the trend can no longer beat the best by more than the noise
within P evaluations; the run then stops P evaluations later. The earliest possible stop
(no improvement from now on) and the planned total bound the forecast. Pure: steps, step
and evaluation times are parameters; nothing reads a clock.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.core.state import RunState

__all__ = ["EarlyStopWatch", "StopForecast", "end_reason", "forecast_stop", "format_forecast"]

_MIN_EVALUATIONS = 4  # fewer points than this do not show a trend
_NOISE_FACTOR = 0.5  # the trend must beat the best by this many noise sigmas to count


@dataclasses.dataclass(frozen=True)
class StopForecast:
    """Steps are counts of steps done (1-based) at which training would end.

    ``step``: the likely stop; ``earliest``: the stop if no evaluation improves from now
    on; ``latest``: the planned total. ``remaining_s``: seconds from ``steps_done`` to
    ``step`` when a step time was given, else None.
    """

    step: int
    earliest: int
    latest: int
    remaining_s: float | None = None


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float, float]:
    """Least squares ``y ≈ c + a·exp(-x/tau)`` over a grid of tau: ``(c, a, tau, sse)``."""
    best = (ys[-1], 0.0, 1.0, math.inf)
    span = max(xs) - min(xs) or 1.0
    for i in range(48):
        tau = span * 0.02 * (1.25**i)  # 2 % of the span up to ~80x it
        es = [math.exp(-x / tau) for x in xs]
        mean_e, mean_y = statistics.fmean(es), statistics.fmean(ys)
        var_e = sum((e - mean_e) ** 2 for e in es)
        if var_e <= 1e-300:
            continue
        a = sum((e - mean_e) * (y - mean_y) for e, y in zip(es, ys, strict=True)) / var_e
        c = mean_y - a * mean_e
        sse = sum((c + a * e - y) ** 2 for e, y in zip(es, ys, strict=True))
        if sse < best[3]:
            best = (c, a, tau, sse)
    return best


def _running_best(values: Sequence[float]) -> list[float]:
    out, best = [], math.inf
    for value in values:
        best = min(best, value)
        out.append(best)
    return out


def _last_improvement(values: Sequence[float]) -> int:
    """Index of the last evaluation that set a new best (lower is better)."""
    best, index = math.inf, 0
    for i, value in enumerate(values):
        if value < best:
            best, index = value, i
    return index


def forecast_stop(
    steps: Sequence[int],
    values: Sequence[float],
    *,
    patience: int,
    total_steps: int,
    higher_is_better: bool = False,
    steps_done: int | None = None,
    step_s: float | None = None,
    evaluation_s: float = 0.0,
) -> StopForecast | None:
    """Where a run with early stopping will likely end.

    ``steps``: steps done (1-based) at each evaluation so far, increasing; ``values``: the
    validation metric early stopping watches at those evaluations; ``patience``:
    evaluations without improvement that end the run; ``total_steps``: the planned total.
    ``step_s`` / ``evaluation_s`` (seconds per step / per evaluation) turn the forecast into
    ``remaining_s``. Returns None when early stopping is off (``patience <= 0``), with
    fewer than four evaluations, or when the evaluations are not evenly usable. Never
    returns a step before the earliest possible stop or after ``total_steps``.
    """
    pairs = [(s, v) for s, v in zip(steps, values, strict=False) if math.isfinite(v)]
    if patience <= 0 or len(pairs) < _MIN_EVALUATIONS or total_steps <= 0:
        return None
    xs = [float(s) for s, _ in pairs]
    ys = [-v if higher_is_better else v for _, v in pairs]
    interval = statistics.median(b - a for a, b in itertools.pairwise(xs))
    if interval <= 0:
        return None
    window = patience * interval
    last = _last_improvement(ys)
    earliest = min(total_steps, round(xs[last] + window))
    c, a, tau, _ = _fit(xs, _running_best(ys))
    residuals = [y - (c + a * math.exp(-x / tau)) for x, y in zip(xs, ys, strict=True)]
    noise = statistics.pstdev(residuals) if len(residuals) > 1 else 0.0
    gain_factor = a * (1 - math.exp(-window / tau))  # trend gain over one patience window
    threshold = max(noise * _NOISE_FACTOR, 1e-12 * max(1.0, abs(c)))
    # where the trend stops beating the best by more than the noise within one window
    # (when it has nothing left to give, the best stands)
    plateau = xs[last] if gain_factor <= threshold else tau * math.log(gain_factor / threshold)
    likely = round(max(plateau, xs[last]) + window)
    done = int(xs[-1]) if steps_done is None else steps_done
    earliest = min(total_steps, max(earliest, done))
    step = max(earliest, min(total_steps, likely))
    remaining = None
    if step_s is not None and math.isfinite(step_s):
        evaluations_left = max(0.0, (step - done) / interval)
        remaining = max(0, step - done) * step_s + evaluations_left * evaluation_s
    return StopForecast(step=step, earliest=earliest, latest=total_steps, remaining_s=remaining)


def format_forecast(forecast: StopForecast | None, total_steps: int) -> str:
    """The early-stop bound and forecast in words: every view's, and status.json's.

    ``"at most 11,000 steps (early stopping); likely stops near step 2,900 (not before
    2,400), ≈ 45 s from now"`` (the time when the forecast has ``remaining_s``); before a
    forecast: ``"…; too early to forecast the stop"``; ``total_steps``: the planned total.
    """
    head = f"at most {total_steps:,} steps (early stopping)"
    if forecast is None:
        return f"{head}; too early to forecast the stop"
    if forecast.step >= forecast.latest:
        return f"{head}; likely runs to the end"
    if forecast.step <= forecast.earliest:  # no improvement foreseen: the earliest stop
        words = f"{head}; likely stops at step {forecast.step:,} unless the metric improves"
    else:
        words = (
            f"{head}; likely stops near step {forecast.step:,} (not before {forecast.earliest:,})"
        )
    if forecast.remaining_s is not None:
        words += f", ≈ {format_duration(forecast.remaining_s)} from now"
    return words


def end_reason(state: RunState, patience: int | None = None) -> str:
    """Why a run ended, in words.

    ``"stopped early: no validation improvement in 5 evaluations; best at step 2,600"``; ``""`` for
    a run that ran its planned total.
    """
    reason = state.reason
    if state.status == "completed" and reason == "early stopping":
        count = patience or state.evaluations_since_best
        best = f"; best at step {state.best_step:,}" if state.best_step else ""
        plural = "" if count == 1 else "s"
        return f"stopped early: no validation improvement in {count} evaluation{plural}{best}"
    if state.status == "stopped":
        return reason or "stopped"
    return ""


#: Ludwig's default validation metric per output type (what early stopping watches)
_DEFAULT_METRIC = {
    "binary": "roc_auc",
    "category": "accuracy",
    "number": "mean_squared_error",
    "set": "jaccard",
    "vector": "mean_squared_error",
}
_LOWER_IS_BETTER = frozenset(
    {"loss", "mean_squared_error", "mean_absolute_error", "root_mean_squared_error"}
)


def _patience(trainer: Mapping[str, object]) -> int:
    value = trainer.get("early_stop", 5)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 5


class EarlyStopWatch:
    """Follows a run's evaluations and forecasts its early stop.

    ``config``: the rendered Ludwig config (``trainer.early_stop``, ``validation_field``,
    ``validation_metric``, as Ludwig defines them). :attr:`active` is False when early
    stopping is off or nothing is known about the config.
    """

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        config = config or {}
        trainer = config.get("trainer") or {}
        outputs = config.get("output_features") or []
        self.patience = _patience(trainer) if outputs else 0
        self.feature = str(
            trainer.get("validation_field") or (outputs[0]["name"] if outputs else "")
        )
        kind = next((f.get("type") for f in outputs if f.get("name") == self.feature), None)
        self.metric = str(
            trainer.get("validation_metric") or _DEFAULT_METRIC.get(str(kind), "loss")
        )
        self.steps: list[int] = []
        self.values: list[float] = []
        self._eval_seconds: list[float] = []
        self.has_validation = False

    @property
    def active(self) -> bool:
        """Whether early stopping is on.

        It also needs a validation split, seen at the first evaluation.
        """
        return self.patience > 0 and (self.has_validation or not self.steps)

    def observe(self, event: ev.Event) -> None:
        """Record the watched validation metric of an ``EvaluationFinished`` event; ignore others.

        Without the feature's metric it falls back to the combined loss, as the engine does.
        """
        if not isinstance(event, ev.EvaluationFinished):
            return
        split = event.metrics.get("validation")
        self.has_validation = self.has_validation or isinstance(split, Mapping)
        if not isinstance(split, Mapping):
            return
        value = (split.get(self.feature) or {}).get(self.metric)
        if value is None:  # the engine falls back to the combined loss, and so do we
            value = (split.get("combined") or {}).get("loss")
            self.metric = "loss" if value is not None else self.metric
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.steps.append(event.step + 1)
            self.values.append(float(value))
            self._eval_seconds.append(max(0.0, event.time - event.start_time))

    def forecast(
        self, steps_done: int, total_steps: int, step_s: float | None = None
    ) -> StopForecast | None:
        """:func:`forecast_stop` over what was seen; ``step_s``: seconds per step."""
        if not self.active:
            return None
        evaluation_s = statistics.fmean(self._eval_seconds) if self._eval_seconds else 0.0
        return forecast_stop(
            self.steps,
            self.values,
            patience=self.patience,
            total_steps=total_steps,
            higher_is_better=self.metric not in _LOWER_IS_BETTER,
            steps_done=steps_done,
            step_s=step_s,
            evaluation_s=evaluation_s,
        )
