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
