"""Early-stop forecast and the words for why a run ended (pure, virtual steps and times)."""

import dataclasses
import math
import random
import statistics

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.early_stop import end_reason, forecast_stop, format_forecast
from ludwig_nb.core.state import RunState, reduce_all

EVERY = 100  # steps between evaluations
TOTAL = 20_000


def _curve(seed, tau=1500.0, noise=0.004):
    rng = random.Random(seed)
    steps = list(range(EVERY, TOTAL + 1, EVERY))
    return steps, [0.3 + 0.5 * math.exp(-s / tau) + rng.gauss(0, noise) for s in steps]


def _actual_stop(values, patience):
    best, stale = math.inf, 0
    for i, value in enumerate(values):
        if value < best:
            best, stale = value, 0
        else:
            stale += 1
            if stale >= patience:
                return (i + 1) * EVERY
    return TOTAL


@pytest.mark.parametrize("tau", [800.0, 1500.0, 3000.0])
def test_forecast_is_far_closer_to_the_real_stop_than_the_planned_total(tau):
    errors, total_errors = [], []
    for seed in range(30):
        steps, values = _curve(seed, tau)
        actual = _actual_stop(values, patience=5)
        seen = max(4, int(actual * 0.6) // EVERY)  # forecast 60 % of the way to the stop
        forecast = forecast_stop(steps[:seen], values[:seen], patience=5, total_steps=TOTAL)
        assert forecast is not None
        errors.append(abs(forecast.step - actual) / actual)
        total_errors.append(abs(TOTAL - actual) / actual)
    assert statistics.median(errors) < 0.5 * statistics.median(total_errors)
    assert statistics.median(errors) < 0.4


def test_forecast_is_bounded_by_the_earliest_stop_and_the_total():
    steps = [100, 200, 300, 400, 500]
    flat = [0.5, 0.5, 0.5, 0.5, 0.5]  # best at the first evaluation, nothing to gain
    forecast = forecast_stop(steps, flat, patience=5, total_steps=10_000)
    assert forecast is not None and forecast.step == forecast.earliest == 600
    falling = [1.0, 0.5, 0.25, 0.125, 0.0625]  # halving: still far from its plateau
    late = forecast_stop(steps, falling, patience=3, total_steps=900)
    assert late is not None and late.step <= 900 and late.latest == 900


def test_higher_is_better_metrics_and_time_as_a_parameter():
    steps = [100, 200, 300, 400, 500, 600]
    accuracy = [0.6, 0.7, 0.75, 0.76, 0.76, 0.755]
    forecast = forecast_stop(
        steps, accuracy, patience=2, total_steps=5000, steps_done=600, step_s=0.01, evaluation_s=0.5
    )
    assert forecast is not None and forecast.step >= 600
    evaluations = (forecast.step - 600) / 100
    assert forecast.remaining_s == pytest.approx((forecast.step - 600) * 0.01 + evaluations * 0.5)


def test_no_forecast_without_early_stopping_or_enough_evaluations():
    assert forecast_stop([1, 2, 3, 4], [4, 3, 2, 1], patience=0, total_steps=10) is None
    assert forecast_stop([1, 2, 3], [3, 2, 1], patience=5, total_steps=10) is None
    assert forecast_stop([1, 2, 3, 4], [math.nan] * 4, patience=5, total_steps=10) is None


def test_forecast_text_says_the_total_is_an_upper_bound():
    assert format_forecast(None, 11_000) == (
        "at most 11,000 steps (early stopping); too early to forecast the stop"
    )
    forecast = forecast_stop([100, 200, 300, 400], [0.5] * 4, patience=5, total_steps=11_000)
    assert format_forecast(forecast, 11_000) == (
        "at most 11,000 steps (early stopping); likely stops at step 600 unless the metric improves"
    )
    later = dataclasses.replace(forecast, step=900)
    assert format_forecast(later, 11_000).endswith("likely stops near step 900 (not before 600)")
    timed = dataclasses.replace(later, remaining_s=45.0)
    assert format_forecast(timed, 11_000).endswith("(not before 600), ≈ 45 s from now")
    to_end = dataclasses.replace(timed, step=11_000)
    assert format_forecast(to_end, 11_000).endswith("; likely runs to the end")


def _evaluation(step, improved):
    return ev.EvaluationFinished(
        time=step,
        step=step - 1,
        epoch=0,
        start_time=step,
        metrics={"validation": {}},
        improved=improved,
    )


def test_end_reason_words_early_stopping_and_stops():
    events = [
        _evaluation(2600, True),
        *(_evaluation(2600 + 100 * i, False) for i in range(1, 6)),
        ev.RunFinished(time=9, status="completed", step=3100, reason="early stopping"),
    ]
    state = reduce_all(events)
    assert end_reason(state) == (
        "stopped early: no validation improvement in 5 evaluations; best at step 2,600"
    )
    assert end_reason(RunState(status="stopped", reason="stopped: keyboard interrupt")) == (
        "stopped: keyboard interrupt"
    )
    assert end_reason(RunState(status="completed")) == ""


def test_a_still_improving_accuracy_cannot_stop_before_its_patience_runs_out():
    """Accuracy (higher is better) improved at the last evaluation: the earliest stop is one
    patience window after it, and the time left counts the evaluations still to run."""
    steps = [100, 200, 300, 400, 500, 600]
    accuracy = [0.5, 0.6, 0.66, 0.7, 0.72, 0.73]
    forecast = forecast_stop(
        steps,
        accuracy,
        patience=2,
        total_steps=5000,
        steps_done=600,
        step_s=0.01,
        evaluation_s=0.5,
        higher_is_better=True,
    )
    assert forecast is not None
    assert forecast.earliest == 800 and forecast.step >= 800
    steps_left = forecast.step - 600
    assert forecast.remaining_s == pytest.approx(steps_left * 0.01 + steps_left / 100 * 0.5)
    assert forecast.remaining_s > steps_left * 0.01  # evaluations cost time too
