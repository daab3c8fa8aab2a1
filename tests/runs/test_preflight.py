"""Pre-flight: a short pilot's events costed over the full run's plan; a real pilot too."""

from __future__ import annotations

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.runs import preflight
from ludwig_nb.runs.preflight import (
    Prediction,
    _run_tokens,
    _token_costs,
    estimate,
    predict_from_pilot,
)
from tests.runs.conftest import BareEngine, ab_config, ab_frame

PILOT = ev.ScheduleInfo(total_steps=40, steps_per_epoch=40, epochs=1, batch_size=16)
FULL = ev.ScheduleInfo(
    total_steps=400,
    steps_per_epoch=40,
    epochs=10,
    epoch_starts=tuple(range(0, 400, 40)),
    evaluations_after=tuple(range(39, 400, 40)),
    checkpoints_after=tuple(range(39, 400, 40)),
    batch_size=16,
)


class Planner(BareEngine):
    """An engine whose plan the test sets; it records what it was asked to plan."""

    name = "planner"

    def __init__(self):
        self.asked = []

    def plan(self, config, rows):
        self.asked.append((config["trainer"]["batch_size"], rows))
        return FULL


def _pilot_events():
    """Preprocessing 2 s, 40 steps of 0.1 s, an evaluation of 0.5 s, a checkpoint of 0.2 s."""
    events = [
        ev.PhaseChanged(time=8.0, phase="preprocessing"),
        ev.RunStarted(
            time=10.0, run_id="p", name="pilot", engine="planner", device="cpu", schedule=PILOT
        ),
    ]
    events += [
        ev.StepFinished(
            time=10.1 + 0.1 * k, step=k, epoch=0, start_time=10.0 + 0.1 * k, batch_size=16, loss=1.0
        )
        for k in range(40)
    ]
    events += [
        ev.EvaluationFinished(time=14.5, step=39, epoch=0, start_time=14.0, metrics={}),
        ev.CheckpointSaved(time=14.7, step=39, start_time=14.5, path="c"),
        ev.RunFinished(time=15.0, status="completed", step=40),
    ]
    return events


class _PilotRun:
    status = "completed"

    def __init__(self, events):
        self.events = events


def test_the_pilot_is_costed_over_the_engines_plan_of_the_full_run():
    engine = Planner()
    rendered = {"trainer": {"batch_size": "auto", "early_stop": 5}}
    prediction = predict_from_pilot(_PilotRun(_pilot_events()), rendered, engine)
    # the engine planned the full run at the pilot's batch size, over the pilot's epoch of rows
    assert engine.asked == [(16, 40 * 16)]
    assert prediction.schedule is FULL
    assert prediction.step_s == pytest.approx(0.1)
    assert prediction.breakdown["preprocessing"] == pytest.approx(2.0)
    assert prediction.breakdown["final_save"] == pytest.approx(0.3)
    # 400 steps of 0.1 s, 10 evaluations of 0.5 s, 10 checkpoints of 0.2 s, 2 s + 0.3 s once
    assert prediction.total_s == pytest.approx(400 * 0.1 + 10 * 0.5 + 10 * 0.2 + 2.3, rel=0.05)
    assert prediction.low_s <= prediction.total_s <= prediction.high_s
    assert (prediction.pilot_steps, prediction.pilot_s) == (40, pytest.approx(7.0))
    assert prediction.early_stopping  # early_stop 5: the total is an upper bound
    assert "an upper bound" in str(prediction) and "400 steps (10 epochs)" in str(prediction)
    assert "<table>" in prediction._repr_html_()


def test_without_early_stopping_the_total_is_not_a_bound():
    rendered = {"trainer": {"batch_size": 16, "early_stop": -1}}
    prediction = predict_from_pilot(_PilotRun(_pilot_events()), rendered, Planner())
    assert not prediction.early_stopping and "upper bound" not in str(prediction)


def test_the_pilot_config_trains_a_few_steps_checkpoints_once_and_watches_no_gpu():
    rendered = {"trainer": {"epochs": 100, "early_stop": 5}, "gpu_watch": {"enabled": True}}
    pilot = preflight._pilot_config(rendered, 12)
    assert pilot["trainer"] == {
        "epochs": 100,
        "train_steps": 12,
        "steps_per_checkpoint": 12,
        "checkpoints_per_epoch": 0,
        "early_stop": -1,
    }
    assert pilot["gpu_watch"] == {"enabled": False}
    assert rendered["trainer"] == {"epochs": 100, "early_stop": 5}  # the caller's is unchanged


def test_a_pilot_that_does_not_complete_is_an_error_naming_why(monkeypatch):
    class Failed:
        status = "failed"

        class state:
            error = "boom at step 3"

    monkeypatch.setattr(preflight, "pilot_run", lambda *a, **k: Failed())
    with pytest.raises(RuntimeError, match="the pilot run did not complete: boom at step 3"):
        estimate(ab_config("{epochs: 2, batch_size: 16}"), ab_frame(100), engine="builtin")


def test_a_real_pilot_predicts_the_run_from_its_own_steps():
    config = ab_config("{epochs: 3, batch_size: 16, early_stop: -1}")
    prediction = estimate(config, ab_frame(200), pilot_steps=15)
    assert isinstance(prediction, Prediction)
    assert prediction.pilot_steps == 15
    assert prediction.schedule.epochs == 3 and prediction.schedule.batch_size == 16
    assert prediction.schedule.total_steps == 3 * prediction.schedule.steps_per_epoch
    assert 0 < prediction.low_s <= prediction.total_s <= prediction.high_s
    assert set(prediction.breakdown) >= {"preprocessing", "final_save"}


def test_an_llm_pilot_prices_its_tokens_and_carries_the_memory(tiny_llm):
    pytest.importorskip("peft")
    import ludwig_nb
    from ludwig_nb.core.memory_estimate import MemoryEstimate
    from tests.fixtures.llm.tiny import sentiment_frame

    config = {  # as a user writes it (estimate renders it)
        "model_type": "llm",
        "base_model": str(tiny_llm("llama")),
        "input_features": [{"name": "review", "type": "text"}],
        "output_features": [{"name": "label", "type": "text"}],
        "prompt": {"template": "Review: {review}\nSentiment:"},
        "adapter": {"type": "lora", "r": 4},
        "generation": {"max_new_tokens": 4, "do_sample": False},
        "trainer": {"type": "finetune", "epochs": 2, "batch_size": 4, "eval_batch_size": 16},
    }
    prediction = ludwig_nb.estimate(config, sentiment_frame(240), pilot_steps=30)
    assert isinstance(prediction.memory, MemoryEstimate)
    assert prediction.memory.batch_size == 4
    assert prediction.tokens is not None and prediction.tokens > 0
    assert prediction.tokens_per_s is not None and prediction.tokens_per_s > 0
    assert prediction.total_s > prediction.breakdown["steps"] > 0
    text = str(prediction)
    assert "padded tokens at" in text and "GPU memory for" in text
    assert "GPU memory" in prediction._repr_html_()


def test_a_pilot_without_tokens_has_no_token_costs():
    from ludwig_nb.core.eta import EtaTracker

    tracker = EtaTracker()
    info = ev.ScheduleInfo(total_steps=10, steps_per_epoch=10, epochs=1)
    events: list[ev.Event] = [ev.RunStarted(0.0, "r", "r", "builtin", "cpu", info)]
    events += [ev.StepFinished(float(i + 1), i, 0, float(i), 4, 1.0) for i in range(10)]
    for e in events:
        tracker.observe(e)
    steps = [e for e in events if isinstance(e, ev.StepFinished)]
    assert _token_costs(tracker, events, steps) is None


def test_the_runs_tokens_are_the_first_epochs_then_its_mean():
    assert _run_tokens((10, 30), 2) == 40
    assert _run_tokens((10, 30), 5) == 40 + 3 * 20
    assert _run_tokens((10, 30, 50), 2) == 40
    assert _run_tokens((), 5) == 0
