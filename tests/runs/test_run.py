import json

import ludwig_nb.runs.run as run_module
from ludwig_nb.engines.base import Engine
from ludwig_nb.store import rundir
from tests.runs.conftest import ScriptedEngine, make_run, until


def _types(run):
    return [e.type for e in run.events]


def test_a_run_completes_and_its_directory_tells_the_story(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=3)).start().wait(10)
    assert run.is_done and run.status == "completed" and run.model == "model"
    assert _types(run) == [
        "phase_changed",  # queued
        "phase_changed",  # preprocessing, with what it works on
        "run_started",
        "step_finished",
        "step_finished",
        "step_finished",
        "run_finished",
    ]
    lines = (run.directory / rundir.EVENTS_FILE).read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == _types(run)
    status = rundir.read_json(run.directory / rundir.STATUS_FILE)
    assert status["status"] == "completed" and status["step"] == 3 and status["eta"] is None


def test_an_exception_is_captured_logged_and_shown(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=5, fail_at=2)).start().wait(10)
    assert run.status == "failed" and isinstance(run.error, RuntimeError)
    assert "boom at step 2" in run.traceback_text and "Traceback" in run.traceback_text
    status = rundir.read_json(run.directory / rundir.STATUS_FILE)
    assert status["error"] == "RuntimeError: boom at step 2"
    assert run.events[-1].type == "run_failed" and run.events[-1].step == 2


def test_stop_lands_within_one_step(tmp_path):
    engine = ScriptedEngine(steps=50, gated=True)
    run = make_run(tmp_path, engine).start()
    engine.release(3)
    until(lambda: run.step == 3)
    run.stop()
    engine.release(1)
    run.wait(10)
    assert run.status == "stopped" and run.step == 3


def test_a_control_file_from_another_process_stops_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "CONTROL_POLL_S", 0.0)  # every boundary looks
    engine = ScriptedEngine(steps=50, gated=True)
    run = make_run(tmp_path, engine).start()
    engine.release(2)
    until(lambda: run.step == 2)
    rundir.request_control(run.directory, "stop")
    engine.release(1)
    run.wait(10)
    assert run.status == "stopped" and run.state.reason == "sidebar"


def test_the_control_file_is_looked_for_at_most_every_control_poll_s(tmp_path, monkeypatch):
    """A step boundary comes every few hundred microseconds: the look (a stat) is rationed."""
    now = [100.0]
    monkeypatch.setattr(run_module, "_poll_clock", lambda: now[0])
    engine = ScriptedEngine(steps=50, gated=True)
    run = make_run(tmp_path, engine).start()
    engine.release(1)
    until(lambda: run.step == 1)  # the first boundary looked at 100.0
    rundir.request_control(run.directory, "stop")
    now[0] += run_module.CONTROL_POLL_S / 2  # too soon: the next boundary does not look
    engine.release(1)
    until(lambda: run.step == 2)
    assert run.is_active and (run.directory / rundir.CONTROL_FILE).exists()
    now[0] += run_module.CONTROL_POLL_S  # due: the next boundary reads the request
    engine.release(1)
    run.wait(10)
    assert run.status == "stopped" and run.state.reason == "sidebar"
    assert run.step == 2 and not (run.directory / rundir.CONTROL_FILE).exists()


def test_pause_holds_the_step_count_and_resume_continues(tmp_path):
    engine = ScriptedEngine(steps=4, gated=True)
    run = make_run(tmp_path, engine).start()
    engine.release(1)
    until(lambda: run.step == 1)
    run.pause()
    engine.release(1)
    until(lambda: run.status == "paused")
    assert run.step == 1
    run.resume()
    engine.release(2)
    run.wait(10)
    assert run.status == "completed" and run.step == 4
    assert run.state.paused_seconds >= 0


def test_subscriptions_replay_then_stream(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=2)).start().wait(10)
    sub = run.subscribe()
    assert len(sub.drain()) == len(run.events)
    assert sub.drain() == []
    sub.close()
    assert sub.drain() == []


def test_history_has_one_row_per_evaluation(tmp_path):
    from ludwig_nb.core import events as ev

    run = make_run(tmp_path, ScriptedEngine(steps=1)).start().wait(10)
    run.emit(
        ev.EvaluationFinished(
            time=99,
            step=0,
            epoch=0,
            start_time=98,
            metrics={"validation": {"y": {"accuracy": 0.5}}},
        )
    )
    assert run.history.to_dict("records") == [{"step": 0, "epoch": 0, "validation.y.accuracy": 0.5}]


def test_finish_callbacks_run_once_even_when_added_late(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=1))
    seen = []
    run.add_finish_callback(lambda r: seen.append("early"))
    run.start().wait(10)
    run.add_finish_callback(lambda r: seen.append("late"))
    assert seen == ["early", "late"]


def test_status_json_carries_the_eta_while_training(tmp_path):
    engine = ScriptedEngine(steps=60, gated=True)
    run = make_run(tmp_path, engine).start()
    engine.release(30)
    path = run.directory / rundir.STATUS_FILE
    until(lambda: (rundir.read_json(path) or {}).get("step") == 30)
    eta = rundir.read_json(path)["eta"]
    assert eta is not None
    assert 0 <= eta["low_s"] <= eta["remaining_s"] <= eta["high_s"]
    assert eta["state"] in ("warming_up", "stable", "adjusting")
    run.stop()
    engine.release(1)
    run.wait(10)


def test_steps_and_events_agree_with_the_event_log_on_disk(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=5)).start().wait(10)
    lines = [json.loads(x) for x in (run.directory / rundir.EVENTS_FILE).read_text().splitlines()]
    on_disk = [x for x in lines if x["type"] == "step_finished"]
    steps = run.steps
    assert list(steps["step"]) == [x["step"] for x in on_disk] == [0, 1, 2, 3, 4]
    assert list(steps["loss"]) == [x["loss"] for x in on_disk]
    assert (steps["duration_s"] >= 0).all()
    assert [json.loads(e.to_json()) for e in run.events] == lines
    view = run.events
    assert len(view) == len(lines) and view[-1].type == "run_finished"


def test_the_pause_reasons_sent_are_the_documented_ones(tmp_path, monkeypatch):
    """Pause a real run each way it can be paused; every reason its Paused events carry is
    one ``core.events`` documents, and each has its own words in the views."""
    import json

    from ludwig_nb.core import events as ev
    from ludwig_nb.core.status_text import pause_text
    from ludwig_nb.runs.alarm_watch import pause_reason
    from ludwig_nb.store import rundir

    monkeypatch.setattr(run_module, "CONTROL_POLL_S", 0.0)  # every boundary looks
    engine = ScriptedEngine(steps=8, gated=True)
    run = make_run(tmp_path, engine).start()
    pauses = [
        run.pause,  # the dashboard's button, run.pause(), %ludwig_pause
        lambda: rundir.request_control(run.directory, "pause"),  # the sidebar
        lambda: (run.directory / rundir.CONTROL_FILE).write_text(json.dumps({"action": "pause"})),
        lambda: run.control.pause(pause_reason("temperature>=slowdown-5")),  # an alarm
    ]
    for i, pause in enumerate(pauses):
        engine.release(1)
        until(lambda i=i: run.step >= i + 1)  # a polled pause may let a released step by
        pause()
        engine.release(1)
        until(lambda: run.status == "paused")
        words = pause_text(run.state)
        assert words and not words.startswith("paused ("), words  # not the unknown wording
        run.resume()
        until(lambda: run.status != "paused")
    engine.release(8)
    run.wait(10)
    reasons = [e.reason for e in run.events if isinstance(e, ev.Paused)]
    assert reasons == ["user", "sidebar", "control_file", "alarm:temperature>=slowdown-5"]
    for reason in reasons:
        assert reason in ev.PAUSE_SOURCES or reason.startswith(ev.ALARM_PAUSE_PREFIX)


class _PlateauEngine(Engine):
    """Evaluates every 100 steps on a curve that flattens, then waits for the test before
    it ends by early stopping (emits only; the run layer words status.json)."""

    name = "plateau"

    def __init__(self):
        import threading

        self.gate = threading.Event()

    def fit(self, job, emit, control):
        from ludwig_nb.core import events as ev

        schedule = ev.ScheduleInfo(total_steps=11000, steps_per_epoch=100, epochs=110, batch_size=8)
        emit(
            ev.RunStarted(
                time=1.0,
                run_id=job.run_id,
                name=job.name,
                engine=self.name,
                device="cpu",
                schedule=schedule,
            )
        )
        values = [0.8, 0.5, 0.4, 0.36, 0.35, 0.349, 0.3489, 0.35, 0.351, 0.35]
        for i, value in enumerate(values):
            step = 100 * (i + 1) - 1
            t = 2.0 + i
            emit(
                ev.StepFinished(
                    time=t, step=step, epoch=i, start_time=t - 0.01, batch_size=8, loss=value
                )
            )
            metrics = {"validation": {"y": {"mean_squared_error": value}}}
            best = value == min(values[: i + 1])
            emit(
                ev.EvaluationFinished(
                    time=t, step=step, epoch=i, start_time=t - 0.1, metrics=metrics, improved=best
                )
            )
        self.gate.wait(10)
        emit(ev.RunFinished(time=20.0, status="completed", step=1000, reason="early stopping"))
        return "model"


def test_status_json_says_the_early_stop_bound_forecast_and_why_it_stopped(tmp_path):
    from ludwig_nb.core.eta.display import format_estimate
    from ludwig_nb.core.state import reduce_all
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.runs.run import Run

    config = {"output_features": [{"name": "y", "type": "number"}], "trainer": {"early_stop": 3}}
    directory = tmp_path / "es-1"
    job = TrainJob(config=config, dataset=None, run_dir=directory, run_id="es-1", name="es")
    engine = _PlateauEngine()
    run = Run(run_id="es-1", name="es", directory=directory, engine=engine, job=job).start()
    path = directory / rundir.STATUS_FILE
    until(lambda: (rundir.read_json(path) or {}).get("evaluations") == 10)
    live = rundir.read_json(path)["early_stop"]
    assert live["patience"] == 3 and live["metric"] == "mean_squared_error"
    assert live["upper_bound"] == 11000 and 1000 <= live["likely_step"] < 11000
    assert live["text"].startswith("at most 11,000 steps (early stopping); likely stop")
    assert f"step {live['likely_step']:,}" in live["text"]
    # the sidebar's ETA: the views' own words at the moment of writing, "≤" under early stopping
    status = rundir.read_json(path)
    reading = run.eta_reading(status["written_at"])
    assert status["eta_text"] == format_estimate(reading.estimate, status["written_at"], bound=True)
    assert status["eta_text"].startswith(("≤ ", "warming up… ≤ "))
    engine.gate.set()
    run.wait(60)
    final = rundir.read_json(path)
    reason = "stopped early: no validation improvement in 3 evaluations; best at step 700"
    assert final["end_reason"] == reason and final["early_stop"]["text"] == reason
    assert final["pause_text"] == "" and final["eta_text"] == ""
    assert reduce_all(run.events).best_step == 700


def test_status_json_of_a_run_without_early_stopping_has_no_forecast(tmp_path):
    run = make_run(tmp_path, ScriptedEngine(steps=3)).start().wait(10)
    status = rundir.read_json(run.directory / rundir.STATUS_FILE)
    assert status["early_stop"] is None and status["end_reason"] == ""


def test_a_long_runs_record_thins_its_steps_alike_in_memory_and_on_disk(tmp_path, monkeypatch):
    """Past the budget (lowered here from 100,000 to 40) the run keeps and writes one step in a
    growing stride, the same steps in both; every evaluation stays, the profile and the
    state count every step, and compare, the sidebar's reader and Ludwig's statistics read
    the history whole."""
    from ludwig_nb.core import step_thinning
    from ludwig_nb.runs import train
    from ludwig_nb.runs.compare import compare
    from ludwig_nb.search.statistics import run_statistics
    from ludwig_nb.server.runs_view import run_summary
    from tests.runs.conftest import ab_config, ab_frame

    monkeypatch.setattr(step_thinning, "STEP_BUDGET", 40)
    config = ab_config("{epochs: 20, batch_size: 2, early_stop: -1}")
    run = train(
        config,
        ab_frame(60),
        results_dir=tmp_path,
        registry_dir=tmp_path / "reg",
        threads=1,
        wait=True,
    )
    assert run.status == "completed" and run.step == 420  # 42 rows: 21 steps x 20 epochs
    kept = [s for s in range(420) if step_thinning.keeps_step(s)]
    assert 80 < len(kept) < 130  # all below 80, then 1 in 4, 1 in 16, ...
    lines = [json.loads(x) for x in (run.directory / rundir.EVENTS_FILE).read_text().splitlines()]
    on_disk = [x["step"] for x in lines if x["type"] == "step_finished"]
    assert on_disk == kept == list(run.steps["step"])
    assert run.steps_trained == (420, 2 * 420)
    evaluations = [x for x in lines if x["type"] == "evaluation_finished"]
    assert len(evaluations) == 20 and len(run.history) == 20  # every evaluation kept
    summary = run.resources.to_dict()["summary"]
    assert summary["steps"] == 420 and summary["samples_trained"] == 840
    status = json.loads((run.directory / rundir.STATUS_FILE).read_text())
    assert status["step"] == 420 and status["status"] == "completed"
    curve = compare(run, run.directory).records[1].curves[("validation", "combined", "loss")]
    assert len(curve.value) == 20
    training, _ = run_statistics(str(run.directory))  # a search's Ludwig statistics
    assert len(training["validation"]["combined"]["loss"]) == 20
    ludwig = json.loads((run.directory / "training_statistics.json").read_text())
    assert len(ludwig["validation"]["combined"]["loss"]) == 20  # what ludwig visualize reads
    entry = {"run_id": run.id, "directory": str(run.directory), "pid": 0}
    assert run_summary(entry, pid_alive=lambda pid: False)["step"] == 420
