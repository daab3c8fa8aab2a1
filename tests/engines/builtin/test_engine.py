"""Events and the run contract of ``BuiltinEngine.fit``."""

from __future__ import annotations

import json

import pytest

from ludwig_nb.core.events import RunFinished, StepFinished
from tests.engines.builtin.conftest import make_config, table

NUMBER_TO_BINARY = ([{"name": "x", "type": "number"}], [{"name": "label", "type": "binary"}])


def test_event_stream_follows_the_schedule(run_engine):
    config = make_config(*NUMBER_TO_BINARY, epochs=3)
    result = run_engine(config, table(rows=80))
    kinds = [e.type for e in result.events]
    assert kinds[0] == "phase_changed" and result.events[0].phase == "preprocessing"
    assert kinds[-1] == "run_finished"
    started = result.of("run_started")[0]
    schedule = started.schedule
    # 80 rows: 56 training rows / 16 = 4 steps per epoch
    assert (schedule.steps_per_epoch, schedule.epochs, schedule.total_steps) == (4, 3, 12)
    assert schedule.epoch_starts == (0, 4, 8)
    assert schedule.evaluations_after == (3, 7, 11) == schedule.checkpoints_after
    steps = result.of("step_finished")
    assert [s.step for s in steps] == list(range(12))
    assert all(s.start_time <= s.time and s.batch_size > 0 for s in steps)
    assert steps[-1].batch_size == 56 - 3 * 16
    assert [e.step for e in result.of("evaluation_finished")] == [3, 7, 11]
    assert [e.step for e in result.of("checkpoint_saved")] == [3, 7, 11]
    finished = result.of("run_finished")[0]
    assert (finished.status, finished.step) == ("completed", 12)


def test_events_are_json_and_metrics_are_per_split(run_engine):
    result = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80))
    evaluation = result.of("evaluation_finished")[-1]
    assert set(evaluation.metrics) == {"training", "validation", "test"}
    assert {"accuracy", "roc_auc", "loss"} <= set(evaluation.metrics["validation"]["label"])
    assert "loss" in evaluation.metrics["validation"]["combined"]
    for event in result.events:
        json.loads(event.to_json())


def test_model_and_statistics_are_written_before_run_finished(run_engine, tmp_path):
    seen = {}

    def on_event(event):
        if isinstance(event, RunFinished):
            run_dir = tmp_path / "run0"
            seen["model"] = (run_dir / "model" / "model_weights.pt").is_file()
            seen["stats"] = (run_dir / "training_statistics.json").is_file()

    result = run_engine(make_config(*NUMBER_TO_BINARY), table(rows=80), on_event=on_event)
    assert seen == {"model": True, "stats": True}
    stats = json.loads((result.run_dir / "training_statistics.json").read_text())
    assert len(stats["validation"]["label"]["accuracy"]) == 2
    assert set(stats) == {"training", "validation", "test", "evaluation_frequency"}  # Ludwig's
    assert len(stats["training"]["combined"]["loss"]) == 2  # evaluations after steps 3 and 7


def test_clock_is_injected_for_every_event_time(run_engine):
    ticks = iter(range(10_000))
    result = run_engine(
        make_config(*NUMBER_TO_BINARY), table(rows=80), clock=lambda: float(next(ticks))
    )
    times = [e.time for e in result.events]
    assert times == sorted(times) and times[-1] < 10_000
    assert all(isinstance(t, float) and t < 10_000 for t in times)


def test_early_stopping_shortens_the_schedule(run_engine):
    # learning rate 0 never improves after the first evaluation: stop after 1 + 2 evals
    config = make_config(*NUMBER_TO_BINARY, epochs=20, early_stop=2, learning_rate=0.0)
    result = run_engine(config, table(rows=80))
    changed = result.of("schedule_changed")
    assert len(changed) == 1 and changed[0].reason == "early stopping"
    assert changed[0].schedule.total_steps == 12
    finished = result.of("run_finished")[0]
    assert (finished.status, finished.reason, finished.step) == ("completed", "early stopping", 12)


def test_skip_all_evaluation_still_checkpoints(run_engine):
    result = run_engine(make_config(*NUMBER_TO_BINARY, skip_all_evaluation=True), table(rows=80))
    assert result.of("evaluation_finished") == []
    assert len(result.of("checkpoint_saved")) == 2
    assert result.of("run_started")[0].schedule.evaluations_after == ()


def test_train_steps_and_checkpoints_per_epoch(run_engine):
    config = make_config(*NUMBER_TO_BINARY, train_steps=6, checkpoints_per_epoch=2)
    result = run_engine(config, table(rows=80))
    schedule = result.of("run_started")[0].schedule
    assert (schedule.total_steps, schedule.epochs) == (6, 2)
    assert schedule.checkpoints_after == (1, 3, 5)
    assert len(result.of("step_finished")) == 6


def test_learning_rate_in_step_events_follows_warmup(run_engine):
    config = make_config(
        *NUMBER_TO_BINARY,
        learning_rate=0.1,
        learning_rate_scheduler={"warmup_fraction": 0.5, "decay": "linear"},
    )
    steps: list[StepFinished] = run_engine(config, table(rows=80)).of("step_finished")
    rates = [s.learning_rate for s in steps]
    # Ludwig's warm-up starts at 0 and reaches the base rate when it ends (step 4 of 8 here)
    assert rates[0] == 0.0 and rates[2] == pytest.approx(0.1 / 2)
    assert rates[-1] < rates[5] < rates[4] == pytest.approx(0.1)
