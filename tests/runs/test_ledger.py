"""The run's ledger: one state, one ETA and the GPU identity, reduced once per event."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.runs.ledger import RunLedger, device_index_of
from tests.runs.conftest import ScriptedEngine, make_run

SCHEDULE = ev.ScheduleInfo(total_steps=10, steps_per_epoch=10, epochs=1, batch_size=4)


def _started(device: str, index: int | None = None, t: float = 0.0) -> ev.RunStarted:
    return ev.RunStarted(
        time=t,
        run_id="r-1",
        name="r",
        engine="scripted",
        device=device,
        schedule=SCHEDULE,
        device_index=index,
    )


def test_the_gpu_index_is_the_engines_or_parsed_from_the_device() -> None:
    assert device_index_of(_started("cuda:1")) == 1
    assert device_index_of(_started("cuda")) == 0
    assert device_index_of(_started("cuda:0", index=3)) == 3  # the engine's own word wins
    assert device_index_of(_started("cpu")) is None
    assert device_index_of(_started("mps")) is None


def test_the_run_takes_its_gpu_from_run_started_not_from_construction(tmp_path) -> None:
    run = make_run(tmp_path, ScriptedEngine())
    run.device_index = 5  # what monitoring may guess before the run starts
    assert run.device_index == 5
    run.emit(_started("cuda:1"))
    assert run.device_index == 1
    run.emit(_started("cuda:0", t=1.0))  # a later RunStarted (a resume) says otherwise
    assert run.device_index == 0
    run.emit(_started("cpu", t=2.0))
    assert run.device_index is None
    run._abandon()


def test_a_feed_sees_the_state_of_the_last_event_it_drained() -> None:
    ledger = RunLedger("r-1", "r", "scripted")
    feed = ledger.subscribe()
    assert feed.state.status == "queued"
    ledger.append(_started("cpu"))
    ledger.append(
        ev.StepFinished(time=1.0, step=0, epoch=0, start_time=0.5, batch_size=4, loss=1.0)
    )
    assert [type(e).__name__ for e in feed.drain()] == ["RunStarted", "StepFinished"]
    assert feed.state is ledger.state and feed.state.step == 1
    ledger.append(
        ev.StepFinished(time=2.0, step=1, epoch=0, start_time=1.5, batch_size=4, loss=0.5)
    )
    assert feed.state.step == 1  # not drained yet: the frame's state matches its events
    feed.drain()
    assert feed.state.step == 2
    feed.close()
    ledger.append(ev.RunFinished(time=3.0, status="completed", step=2))
    assert feed.drain() == [] and feed.state.step == 2


def test_a_feed_that_skips_catches_up_without_reading_the_events_between() -> None:
    ledger = RunLedger("r-1", "r", "scripted")
    feed = ledger.subscribe()
    ledger.append(_started("cpu"))
    for k in range(3):
        ledger.append(
            ev.StepFinished(
                time=1.0 + k, step=k, epoch=0, start_time=0.5 + k, batch_size=4, loss=1.0
            )
        )
    feed.skip()
    assert feed.state is ledger.state and feed.state.step == 3
    ledger.append(ev.RunFinished(time=9.0, status="completed", step=3))
    assert [type(e).__name__ for e in feed.drain()] == ["RunFinished"]  # only what came after
    feed.close()
    feed.skip()  # a closed feed stays where it was
    assert feed.state.status == "completed"


def test_the_eta_reading_carries_the_early_stop_forecast() -> None:
    config = {"output_features": [{"name": "y", "type": "category"}], "trainer": {}}
    ledger = RunLedger("r-1", "r", "scripted", config=config)
    off = RunLedger("r-2", "r", "scripted")
    for target in (ledger, off):
        target.append(_started("cpu"))
        for step in range(5):
            done = ev.StepFinished(
                time=step + 1.0, step=step, epoch=0, start_time=step + 0.5, batch_size=4, loss=1.0
            )
            target.append(done)
    reading = ledger.eta_reading(6.0)
    assert reading.early_stopping and not off.eta_reading(6.0).early_stopping
    assert reading.estimate is not None and reading.estimate.remaining_s > 0
    assert reading.forecast is None  # no evaluation yet: too early to forecast
    assert off.eta_reading(6.0).forecast is None


def test_the_run_feeds_its_evaluations_to_the_one_early_stop_watch() -> None:
    """After four evaluations of a plateauing validation loss the run itself forecasts the
    stop; no view has to watch the evaluations."""
    config = {"output_features": [{"name": "y", "type": "number"}], "trainer": {"early_stop": 2}}
    ledger = RunLedger("r-1", "r", "scripted", config=config)
    ledger.append(_started("cpu"))
    for step in range(10):
        done = ev.StepFinished(
            time=step + 1.0, step=step, epoch=0, start_time=step + 0.5, batch_size=4, loss=1.0
        )
        ledger.append(done)
        if step % 2 == 1:
            loss = [0.9, 0.5, 0.45, 0.449, 0.449][step // 2]
            metrics = {"validation": {"y": {"loss": loss}, "combined": {"loss": loss}}}
            evaluated = ev.EvaluationFinished(
                time=step + 1.2, step=step, epoch=0, start_time=step + 1.0, metrics=metrics
            )
            ledger.append(evaluated)
    reading = ledger.eta_reading(11.0)
    assert ledger.early_stop.steps == [2, 4, 6, 8, 10]
    assert reading.forecast is not None
    assert 10 <= reading.forecast.earliest <= reading.forecast.step <= SCHEDULE.total_steps


def _binary_evaluation(epoch: int, improved: bool, recall: float, loss: float):
    metrics = {"validation": {"y": {"recall": recall, "roc_auc": 0.9, "loss": loss}}}
    return ev.EvaluationFinished(
        time=float(epoch),
        step=epoch,
        epoch=epoch,
        start_time=0.0,
        metrics=metrics,
        improved=improved,
    )


def test_the_run_finished_event_carries_the_hindsight_to_the_log_and_the_state() -> None:
    config = {"output_features": [{"name": "y", "type": "binary"}], "trainer": {}}
    ledger = RunLedger("r-1", "r", "scripted", config=config)
    for event in (_started("cpu"), _binary_evaluation(0, True, 0.0, 0.6)):
        ledger.append(ledger.completed(event))
    finished = ledger.completed(ev.RunFinished(time=5.0, status="completed", step=10))
    state = ledger.append(finished)
    assert isinstance(finished, ev.RunFinished)
    assert finished.warnings and "predicts false for every" in finished.warnings[0]
    assert state.warnings == finished.warnings
    assert state.to_dict()["warnings"] == list(finished.warnings)  # status.json
    assert ledger.events[-1].warnings == finished.warnings  # the event log


def test_an_engine_that_timed_its_auto_batch_size_gets_a_note() -> None:
    ledger = RunLedger("r-1", "r", "scripted", config={"trainer": {"batch_size": "auto"}})
    started = ledger.completed(_started("cpu"))
    assert isinstance(started, ev.RunStarted)
    assert "pin it with trainer.batch_size: 4" in started.schedule.batch_note
    pinned = RunLedger("r-1", "r", "scripted", config={"trainer": {"batch_size": 4}})
    assert pinned.completed(_started("cpu")).schedule.batch_note == ""
