"""The ETA line: the run's one ETA, worded, refreshed at most once a second, first
prediction kept; views never reduce events into a state or an ETA of their own."""

from __future__ import annotations

import pytest

from ludwig_nb.core.eta import EtaTracker
from ludwig_nb.ui.dashboard import Dashboard
from ludwig_nb.ui.eta_text import EtaText
from ludwig_nb.ui.text_view import TextView
from tests.ui.conftest import T0, FakeClock, FakeRun, evaluation, started, steps


def test_text_changes_at_most_once_a_second() -> None:
    run = FakeRun()
    eta = EtaText(run, min_interval=1.0)
    run.emit(started(run), *steps(0, 60, T0))
    assert eta.refresh(run.state, T0 + 6.0, mono_now=0.0)
    first = eta.text
    assert "≈" in first
    run.emit(*steps(60, 30, T0 + 6.0, step_s=0.3))  # slower steps: a new estimate
    assert not eta.refresh(run.state, T0 + 15.0, mono_now=0.5)
    assert eta.text == first
    eta.refresh(run.state, T0 + 15.0, mono_now=1.0)
    assert eta.text != first
    assert eta.first_finish is not None and eta.first_finish > T0


def test_before_any_step_it_says_warming_up() -> None:
    run = FakeRun()
    eta = EtaText(run)
    assert eta.text == "estimating…"
    run.emit(started(run))
    eta.refresh(run.state, T0, mono_now=0.0)
    assert eta.text.startswith("warming up")
    assert eta.first_finish is None


def test_the_first_finish_is_the_runs_first_stable_estimate() -> None:
    run = FakeRun()
    run.emit(started(run), *steps(0, 60, T0))
    first = run.ledger.eta.first_estimate
    assert first is not None
    eta = EtaText(run)  # a view opened late still compares with the run's first estimate
    eta.refresh(run.state, T0 + 60.0, mono_now=0.0)
    assert eta.first_finish == pytest.approx(first.finish_time)


def test_views_read_the_runs_state_and_eta_and_reduce_nothing(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    """Two views of one run: the ETA tracker sees each event once (the run's), and each
    view's state is the run's own object, not a copy it folded itself."""
    observed: list[object] = []
    original = EtaTracker.observe

    def counting(self: EtaTracker, event: object) -> None:
        observed.append(event)
        original(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(EtaTracker, "observe", counting)
    run = FakeRun()
    dash = Dashboard(run, clock=clock)
    text = TextView(run, update=lambda bundle: None, clock=clock, min_interval=0.0)
    events = [started(run), *steps(0, 50, T0), evaluation(49, T0 + 5.5, 0.8, 0.4)]
    run.emit(*events)
    clock.now = T0 + 6.0
    dash.refresh(now=1.0)
    text.refresh(now=1.0)
    assert len(observed) == len(events)
    assert dash.state is run.state and text.state is run.state
    assert dash.state.step == 50
    assert dash.eta.text == text.eta.text and "≈" in dash.eta.text


def test_an_early_stopping_run_warming_up_reads_warming_up_then_its_bound() -> None:
    """ "warming up… ≤ 19 s", never "≤ warming up… ≈ 19 s"."""
    import dataclasses

    from ludwig_nb.core.eta.plan import Estimate
    from ludwig_nb.runs.handle import EtaReading
    from ludwig_nb.ui.eta_text import reading_words

    run = FakeRun()
    run.emit(started(run))
    state = dataclasses.replace(run.state, total_steps=400)
    warm = Estimate(remaining_s=19, low_s=10, high_s=30, state="warming_up", at=T0, step_s=0.1)
    reading = EtaReading(estimate=warm, early_stopping=True)
    text = reading_words(reading, state, T0)
    assert text.startswith("warming up… ≤ 19 s · at most 400 steps"), text
    stable = dataclasses.replace(warm, remaining_s=240, low_s=240, high_s=240, state="stable")
    text = reading_words(dataclasses.replace(reading, estimate=stable), state, T0)
    assert text.startswith("≤ 4 min · done ≈ "), text


def test_the_deadline_follows_the_runs_reading_and_its_change_is_a_change() -> None:
    """The words of the ETA stay, the deadline's outlook moves: the view must redraw."""
    import dataclasses

    outlook: dict[str, object] = {"verdict": "ok", "text": "finishes 1 h before your deadline"}

    class WithDeadline(FakeRun):
        def eta_reading(self, now: float):  # type: ignore[no-untyped-def]
            return dataclasses.replace(super().eta_reading(now), deadline=dict(outlook))

    run = WithDeadline()
    eta = EtaText(run, min_interval=1.0)
    run.emit(started(run), *steps(0, 60, T0))
    assert eta.refresh(run.state, T0 + 6.0, mono_now=0.0)
    assert eta.deadline == outlook
    assert not eta.refresh(run.state, T0 + 6.0, mono_now=1.0)  # same words, same outlook
    outlook.update(verdict="at_risk", text="may finish after your deadline")
    assert eta.refresh(run.state, T0 + 6.0, mono_now=2.0)
    assert eta.deadline is not None and eta.deadline["verdict"] == "at_risk"
    assert EtaText(FakeRun()).deadline is None  # a run without one


def test_dashboard_text_view_and_terminal_say_one_eta_sentence(clock: FakeClock) -> None:
    """One producer: for the same run at the same moment, the three views' ETA words are the
    same sentence, made of the two texts status.json carries for the sidebar (``eta_text``
    and ``early_stop.text``)."""
    import dataclasses
    import io

    from ludwig_nb.core import events as ev
    from ludwig_nb.core.eta.display import format_estimate
    from ludwig_nb.core.status_words import early_stop_block
    from ludwig_nb.ui.formatting import eta_line
    from ludwig_nb.ui.terminal import Follower

    config = {"output_features": [{"name": "y", "type": "number"}], "trainer": {"early_stop": 3}}
    run = FakeRun(config=config)
    schedule = ev.ScheduleInfo(total_steps=11000, steps_per_epoch=1100, epochs=10, batch_size=32)
    events: list[ev.Event] = [dataclasses.replace(started(run), schedule=schedule)]
    for i, loss in enumerate([0.8, 0.5, 0.4, 0.36, 0.35, 0.349, 0.35]):
        events += steps(100 * i, 100, T0 + 10.0 * i)
        events.append(evaluation(100 * i + 99, T0 + 10.0 * (i + 1), 0.5, loss))
    run.emit(*events)
    clock.now = T0 + 75.0
    dash = Dashboard(run, clock=clock)
    text = TextView(run, update=lambda bundle: None, clock=clock, min_interval=0.0)
    dash.refresh(now=1.0)
    text.refresh(now=1.0)
    terminal = Follower(run, io.StringIO(), wall=lambda: clock.now).line()

    reading = run.eta_reading(clock.now)
    assert reading.early_stopping and reading.forecast is not None
    block = early_stop_block(run.state, 3, "loss", reading.forecast)
    assert block is not None
    sidebar = format_estimate(reading.estimate, clock.now, bound=True)
    sentence = f"{sidebar} · {block['text']}"
    assert sentence.startswith("≤ ") and "likely stop" in sentence, sentence
    assert dash.eta.text == text.eta.text == sentence
    assert dash.eta_label.value == f"ETA {sentence}" == eta_line(run.state, sentence)
    assert f" · ETA {sentence}" in terminal, terminal
