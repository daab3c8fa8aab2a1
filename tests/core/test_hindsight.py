"""Hindsight: the warnings a finished run's history gives about the model it kept."""

from __future__ import annotations

from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.hindsight import Hindsight


def _config(kind: str, **trainer: Any) -> dict[str, Any]:
    return {
        "output_features": [{"name": "y", "type": kind}],
        "trainer": {"epochs": 30, **trainer},
    }


def _evaluation(epoch: int, improved: bool, held: dict[str, Any], train: dict[str, Any]):
    return ev.EvaluationFinished(
        time=float(epoch),
        step=epoch * 10 - 1,
        epoch=epoch - 1,
        start_time=float(epoch),
        metrics={"validation": {"y": held}, "training": {"y": train}},
        improved=improved,
    )


def _binary_history() -> list[ev.Event]:
    """roc_auc peaks at epoch 5 while the bias is still wrong; loss and accuracy improve to 30."""
    events: list[ev.Event] = []
    for epoch in range(1, 31):
        early = epoch <= 5
        held = {
            "roc_auc": 0.90 + 0.01 * epoch if early else 0.94,
            "loss": 0.69 - 0.01 * epoch,
            "accuracy": 0.62 if epoch <= 8 else 0.62 + 0.01 * (epoch - 8),
            "recall": 0.0 if epoch <= 8 else 0.5,
            "specificity": 1.0,
        }
        events.append(_evaluation(epoch, early, held, {"loss": 0.7 - 0.01 * epoch}))
    return events


def _watch(config: dict[str, Any], events: list[ev.Event]) -> Hindsight:
    watch = Hindsight(config)
    for event in events:
        watch.observe(event)
    return watch


def test_roc_auc_keeps_an_early_one_class_model_and_says_so():
    warnings = _watch(_config("binary"), _binary_history()).warnings()
    assert len(warnings) == 2
    one_class, passed_over = warnings
    assert one_class.startswith("y: the model kept (epoch 5) predicts false for every")
    assert "set `trainer.validation_metric: loss`" in one_class
    assert passed_over.startswith("y: best by roc_auc at epoch 5")
    assert "loss kept improving to epoch 30" in passed_over
    assert "Set `trainer.validation_metric: loss`" in passed_over


def test_a_last_evaluation_only_slightly_better_is_not_worth_a_warning():
    """As on a real run (default-of-credit, seed 110): kept at epoch 89 with loss 0.1151 and
    accuracy 0.9575, the last evaluation 0.1136 and 0.96 (one row of 400): noise, neither
    "passed over" nor "stalled while still learning".
    """
    events: list[ev.Event] = []
    for epoch in range(1, 95):
        held = {
            "roc_auc": min(0.93, 0.80 + 0.002 * epoch),
            "loss": 0.1151 if epoch <= 89 else 0.1151 - 0.0003 * (epoch - 89),
            "accuracy": 0.9575 if epoch < 94 else 0.96,
            "recall": 0.3,
            "specificity": 0.99,
        }
        events.append(_evaluation(epoch, epoch == 89, held, {"loss": 0.1}))
    config = _config("binary")
    config["trainer"]["epochs"] = 100
    assert _watch(config, events).warnings() == ()
    # the same history with a last evaluation clearly better on both is named
    clearly = [*events[:-1], _evaluation(94, False, {**held, "loss": 0.10, "accuracy": 0.97}, {})]
    (warning,) = _watch(config, clearly).warnings()
    assert warning.startswith("y: best by roc_auc at epoch 89")
    assert "(the model kept: validation loss 0.1151" in warning


def test_validation_by_loss_keeps_the_last_model_and_says_nothing():
    events = [
        _evaluation(e.epoch + 1, True, dict(e.metrics["validation"]["y"]), {"loss": 0.5})
        for e in _binary_history()
        if isinstance(e, ev.EvaluationFinished)
    ]
    assert _watch(_config("binary", validation_metric="loss"), events).warnings() == ()


def test_a_category_model_that_scores_the_majority_class():
    baseline = ev.BaselineComputed(
        time=0.0,
        metrics={"validation": {"y": {"accuracy": 0.55}}},
        predictors={"y": "always 'a'"},
    )
    events = [baseline, _evaluation(1, True, {"accuracy": 0.55, "loss": 1.0}, {"loss": 1.0})]
    (warning,) = _watch(_config("category"), events).warnings()
    assert "scores exactly what always 'a' scores" in warning
    events[1] = _evaluation(1, True, {"accuracy": 0.7, "loss": 1.0}, {"loss": 1.0})
    assert _watch(_config("category"), events).warnings() == ()


def test_a_metric_that_stood_still_while_the_loss_fell_stopped_training_early():
    events = [
        _evaluation(epoch, epoch == 1, {"accuracy": 0.233, "loss": 2.1 - 0.04 * epoch}, {})
        for epoch in range(1, 7)
    ]
    (warning,) = _watch(_config("category"), events).warnings()
    assert warning.startswith("y: accuracy stayed at 0.233 from epoch 1 to epoch 6")
    assert "stopped at epoch 6 of 30" in warning and "(2.06 to 1.86)" in warning
    assert "`trainer.validation_metric: loss`" in warning
    flat_loss = [_evaluation(e, e == 1, {"accuracy": 0.233, "loss": 2.0}, {}) for e in range(1, 7)]
    assert _watch(_config("category"), flat_loss).warnings() == ()  # nothing was being learned
    moving = [
        _evaluation(e, e == 1, {"accuracy": 0.5 - 0.01 * e, "loss": 2.1 - 0.04 * e}, {})
        for e in range(1, 7)
    ]
    assert _watch(_config("category"), moving).warnings() == ()  # the metric did move
    by_loss = _config("category", validation_metric="loss")
    assert _watch(by_loss, events).warnings() == ()


def _regression(train_losses: list[float], mse: float) -> list[ev.Event]:
    baseline = ev.BaselineComputed(
        time=0.0,
        metrics={"validation": {"y": {"mean_squared_error": 60.0, "r2": 0.0}}},
        predictors={"y": "always the mean 7.5"},
    )
    return [
        baseline,
        *(
            _evaluation(i + 1, True, {"mean_squared_error": mse, "r2": 1 - mse / 60}, {"loss": t})
            for i, t in enumerate(train_losses)
        ),
    ]


def test_a_regression_worse_than_the_mean_while_still_learning_underfit():
    (warning,) = _watch(_config("number"), _regression([90.0, 80.0, 70.0], 75.0)).warnings()
    assert warning.startswith("y: the model ends worse than always predicting the training mean")
    assert "it underfit" in warning
    assert "trainer.epochs above 30" in warning
    assert "`preprocessing: {normalization: zscore}` on 'y'" in warning


def test_no_underfit_warning_when_the_loss_stopped_falling_or_the_model_beats_the_mean():
    assert _watch(_config("number"), _regression([70.0, 70.0, 70.0], 75.0)).warnings() == ()
    assert _watch(_config("number"), _regression([90.0, 80.0, 70.0], 30.0)).warnings() == ()


def test_a_regression_whose_validation_loss_falls_while_the_training_loss_wobbles_underfit():
    """As on a real run (mpg, seed 42): the epoch's mean training loss wobbled (413.9, 412.9,
    415.8) while the validation loss fell steadily; the model ended at r2 -6.6."""
    events = _regression([413.9, 412.9, 415.8], 7.6 * 60)
    for event, loss in zip(events[1:], (470.0, 465.0, 460.0), strict=True):
        event.metrics["validation"]["y"]["loss"] = loss
    (warning,) = _watch(_config("number"), events).warnings()
    assert "while its validation loss was still falling (470 to 460" in warning
    assert "it underfit" in warning


def test_a_regression_far_worse_than_the_mean_is_named_even_when_its_loss_stood_still():
    (warning,) = _watch(_config("number"), _regression([400.0, 400.0, 400.0], 7.6 * 60)).warnings()
    assert warning.startswith("y: the model ends far worse than always predicting the training")
    assert "(validation r2 -6.6)" in warning and "its loss had stopped falling" in warning
    assert "`preprocessing: {normalization: zscore}` on 'y'" in warning


def test_no_history_no_warnings():
    assert Hindsight(None).warnings() == ()
    assert Hindsight(_config("binary")).warnings() == ()
