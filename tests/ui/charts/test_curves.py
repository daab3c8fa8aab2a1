"""Curve data from events: train loss per step, evaluation loss and metric per split."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.ui.charts.curves import CurveData
from tests.ui.conftest import T0, evaluation, steps


def test_curves_from_steps_and_evaluations() -> None:
    curves = CurveData(max_points=50)
    assert curves.loss_curves() == {} and curves.metric_curves() == {}
    assert curves.metric_label == "validation metric"
    version = curves.version
    for event in steps(0, 500, T0):
        curves.observe(event)
    curves.observe(evaluation(499, T0 + 60, accuracy=0.8, loss=0.6))
    assert curves.version > version
    loss = curves.loss_curves()
    # the training split's eval loss is left out; evaluations come last (drawn on top)
    assert list(loss) == ["train", "train (smoothed)", "validation"]
    xs, ys = loss["train"]
    assert len(xs) <= 50 and xs[0] == 1 and xs[-1] == 500 and max(ys) == 2.0
    assert loss["validation"] == ([500.0], [0.6])
    assert curves.metric == ("label", "accuracy") and curves.metric_label == "label accuracy"
    assert curves.metric_curves()["validation"] == ([500.0], [0.8])


def test_nan_loss_is_not_drawn() -> None:
    curves = CurveData()
    [step] = steps(0, 1, T0)
    curves.observe(step.__class__(**{**step.__dict__, "loss": float("nan")}))
    assert curves.loss_curves() == {}


def test_the_smoothed_loss_is_a_debiased_ema_that_follows_the_level() -> None:
    import random

    rng = random.Random(0)
    curves = CurveData(max_points=10_000)
    for i in range(400):
        level = 1.0 if i < 200 else 0.5
        loss = level + rng.uniform(-0.3, 0.3)
        curves.observe(
            ev.StepFinished(
                time=T0 + i, step=i, epoch=0, start_time=T0 + i, batch_size=8, loss=loss
            )
        )
    _, raw = curves.loss_curves()["train"]
    _, smooth = curves.loss_curves()["train (smoothed)"]
    assert abs(smooth[0] - raw[0]) < 1e-9  # debiased: the first point is not pulled to 0
    spread = lambda v: max(v) - min(v)  # noqa: E731
    assert spread(smooth[100:200]) < 0.5 * spread(raw[100:200])  # much less noisy
    assert abs(sum(smooth[150:200]) / 50 - 1.0) < 0.08  # and on the level
    assert abs(sum(smooth[350:400]) / 50 - 0.5) < 0.08
