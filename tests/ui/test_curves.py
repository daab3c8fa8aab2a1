"""Curve data from events: train loss per step, evaluation loss and metric per split."""

from __future__ import annotations

from ludwig_nb.ui.curves import CurveData
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
    assert set(loss) == {"train", "validation"}  # the training split's eval loss is left out
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
