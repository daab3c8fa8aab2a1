"""The deadline watch on simulated clocks: warnings, and the checkpoint or stop in time.

A fake run first (its ETA is a function of the clock), then real builtin runs whose
clock is virtual (each step takes 2 s of it): the action saves a resumable checkpoint
before the cut-off, and a stopped run resumes from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.deadline import Deadline
from ludwig_nb.core.eta.plan import Estimate
from ludwig_nb.runs.deadline_watch import DeadlineWatch
from tests.runs.conftest import ab_config, ab_frame


class FakeRun:
    """1 000 steps of 1 s from t=0; its ETA is exact (±10 %)."""

    def __init__(self, honours: bool = True) -> None:
        self.control = RunControl()
        if honours:
            self.control.take_checkpoint_request()  # an engine that looks for requests
        self.events: list[ev.Event] = []

    def eta(self, now: float | None = None) -> Estimate:
        assert now is not None
        left = max(0.0, 1000.0 - now)
        return Estimate(left, 0.9 * left, 1.1 * left, "stable", now, 1.0)

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)


STEP = ev.StepFinished(time=0.0, step=0, epoch=0, start_time=0.0, batch_size=4, loss=1.0)


def drive(watch: DeadlineWatch, until: float, trained: bool = True) -> None:
    if trained:
        watch.on_event(STEP)  # a step has finished: there is something to save
    for now in range(1, int(until)):
        watch.check(float(now))


def test_checkpoint_is_requested_once_early_enough_and_the_run_goes_on() -> None:
    run = FakeRun()
    watch = DeadlineWatch(run, Deadline(600.0, action="checkpoint", reserve_s=60.0))
    watch.on_event(ev.CheckpointSaved(time=5.0, step=4, start_time=0.0, path="c", best=False))
    drive(watch, 600)
    warnings = [e for e in run.events if isinstance(e, ev.DeadlineWarning)]
    assert [(w.kind, w.verdict) for w in warnings] == [("warn", "late"), ("checkpoint", "late")]
    # lead: reserve 60 + tick 1 + step 1 + twice the 5 s checkpoint seen = 72 s
    assert warnings[1].time == 600.0 - 72.0
    assert run.control.take_checkpoint_request() == "deadline"
    assert not run.control.stop_requested


def test_an_engine_that_cannot_save_on_request_is_stopped_instead() -> None:
    run = FakeRun(honours=False)
    watch = DeadlineWatch(run, Deadline(600.0, action="checkpoint", reserve_s=60.0))
    drive(watch, 600)
    assert run.control.stop_requested
    assert "this engine saves only when it stops" in (run.control.stop_reason or "")
    acted = [e for e in run.events if isinstance(e, ev.DeadlineWarning) and e.kind != "warn"]
    assert len(acted) == 1 and "the run stops" in acted[0].message


def test_stop_and_warn_actions() -> None:
    stopped, warned = FakeRun(), FakeRun()
    drive(DeadlineWatch(stopped, Deadline(600.0, action="stop", reserve_s=0.0)), 600)
    drive(DeadlineWatch(warned, Deadline(600.0, action="warn")), 600)
    assert stopped.control.stop_reason == (
        f"deadline: stopping to save a checkpoint before your deadline ({_clock(600.0)})"
    )
    assert not warned.control.stop_requested and warned.control.take_checkpoint_request() is None
    assert [e.kind for e in warned.events] == ["warn"]


def _clock(at: float) -> str:
    from ludwig_nb.core.formatting import format_clock

    return format_clock(at, at)


def test_a_checkpoint_waits_for_the_first_step() -> None:
    run = FakeRun()
    watch = DeadlineWatch(run, Deadline(100.0, action="checkpoint", reserve_s=60.0))
    drive(watch, 50, trained=False)  # still preprocessing: past the cut-off (38 s), no step yet
    assert run.control.take_checkpoint_request() is None and not run.control.stop_requested
    assert [e.kind for e in run.events] == ["warn"]
    watch.on_event(
        ev.StepFinished(time=50.0, step=0, epoch=0, start_time=49.0, batch_size=4, loss=1.0)
    )
    assert run.control.take_checkpoint_request() == "deadline"  # at once, at the first step


def test_checks_are_rate_limited_and_end_with_the_run() -> None:
    run = FakeRun()
    watch = DeadlineWatch(run, Deadline(600.0), tick_s=5.0)
    assert watch.check(10.0) and watch.check(12.0) == [] and watch.check(16.0) == []
    watch.on_event(ev.RunFinished(time=20.0, status="completed", step=1000))
    assert watch.check(580.0) == []


def _virtual_run(tmp_path: Path, deadline: str, steps_per_epoch: int = 50, **kw: Any) -> Any:
    """A real builtin run whose clock moves 2 s per finished step (and not otherwise)."""
    import ludwig_nb

    now = [1_000_000.0]
    config = ab_config("{epochs: 4, batch_size: 4, early_stop: -1, steps_per_checkpoint: 1000}")
    config += f"gpu_watch: {{enabled: false, deadline: {deadline}}}\n"
    run = ludwig_nb.train(
        config,
        ab_frame(4 * steps_per_epoch),
        name="deadline",
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        clock=lambda: now[0],
        threads=1,
        **kw,
    )

    def advance(event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            now[0] += 2.0

    run.add_listener(advance)
    run.wait(300)
    return run


def test_a_real_run_saves_a_checkpoint_before_its_deadline_and_trains_on(tmp_path: Path) -> None:
    run = _virtual_run(tmp_path, "{at: 4min, action: checkpoint, reserve: 10s}")
    assert run.status == "completed"
    deadline = run.deadline_watch.deadline.at
    saved = [e for e in run.events if isinstance(e, ev.CheckpointSaved)]
    acted = [e for e in run.events if isinstance(e, ev.DeadlineWarning) and e.kind == "checkpoint"]
    assert len(acted) == 1 and acted[0].time < deadline
    asked = [s for s in saved if s.time >= acted[0].time]
    assert asked and asked[0].time <= deadline - 10.0  # saved, with the reserve left over


def test_a_run_stopped_for_its_deadline_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    import ludwig_nb

    run = _virtual_run(tmp_path, "{at: 4min, action: stop, reserve: 10s}")
    assert run.status == "stopped" and "deadline" in run.state.reason
    stopped_at = run.step
    deadline = run.deadline_watch.deadline.at
    assert 0 < stopped_at < run.total_steps
    assert run.events[-1].time <= deadline - 10.0  # stopped and saved, the reserve left
    resumed = ludwig_nb.train(
        ab_config("{epochs: 4, batch_size: 4, early_stop: -1, steps_per_checkpoint: 1000}"),
        ab_frame(200),
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        resume_from=run.directory,
        threads=1,
        wait=True,
    )
    started = next(e for e in resumed.events if isinstance(e, ev.RunStarted))
    assert started.start_step == stopped_at and resumed.status == "completed"


def test_the_outlook_reaches_the_eta_reading_and_status_json(tmp_path: Path) -> None:
    import json

    from ludwig_nb.config import load_config
    from ludwig_nb.runs.monitoring import attach
    from tests.runs.conftest import ScriptedEngine, make_run, until

    engine = ScriptedEngine(steps=50, gated=True)
    run = make_run(tmp_path, engine)
    config = (
        "input_features: [{name: x, type: number}]\noutput_features: [{name: y, type: binary}]\n"
    )
    attach(run, load_config(config + "gpu_watch: {enabled: false, deadline: 1h}\n"))
    run.start()
    engine.release(3)
    until(lambda: run.step >= 3)
    reading = run.eta_reading()
    assert reading.deadline is not None and reading.deadline["label"] == "your deadline"
    assert reading.deadline["action"] == "checkpoint"
    status = json.loads((run.directory / "status.json").read_text())
    assert status["deadline"] is not None and status["deadline"]["at"] == reading.deadline["at"]
    run.stop()
    engine.release(50)
    run.wait(10)
    final = json.loads((run.directory / "status.json").read_text())
    assert final["deadline"] is None  # an ended run has no deadline to meet
