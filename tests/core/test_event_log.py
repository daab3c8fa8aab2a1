import math
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludwig_nb.core import events as ev
from ludwig_nb.core.event_log import EventLog


def _step(i: int, lr: float | None = 0.001) -> ev.StepFinished:
    return ev.StepFinished(
        time=100.0 + i,
        step=i,
        epoch=i // 10,
        start_time=99.5 + i,
        batch_size=32,
        loss=1.0 / (i + 1),
        learning_rate=lr,
    )


def _mixed(n: int) -> list[ev.Event]:
    out: list[ev.Event] = [ev.PhaseChanged(time=0.0, phase="queued")]
    for i in range(n):
        out.append(_step(i, lr=None if i % 7 == 0 else 0.01 * i))
        if i % 10 == 9:
            out.append(ev.EvaluationFinished(100.0 + i, i, i // 10, 100.0 + i, {"val": {}}))
    out.append(ev.RunFinished(time=1e6, status="completed", step=n))
    return out


def _log(events: list[ev.Event]) -> EventLog:
    log = EventLog()
    for e in events:
        log.append(e)
    return log


def test_reads_back_every_event_in_order():
    events = _mixed(95)
    log = _log(events)
    assert len(log) == len(events) and log.steps == 95
    assert list(log) == events
    assert [log[i] for i in range(len(events))] == events
    assert log[-1] == events[-1] and log[-2] == events[-2]
    assert log.slice(7, 30) == events[7:30]
    assert log.slice(50, 10_000) == events[50:]
    assert log.others() == [e for e in events if not isinstance(e, ev.StepFinished)]
    with pytest.raises(IndexError):
        log[len(events)]


def test_a_view_does_not_change_when_the_log_grows():
    events = _mixed(30)
    log = _log(events)
    view = log.view()
    log.append(_step(30))
    assert len(view) == len(events) and list(view) == events
    assert view[-1] == events[-1] and view[2:5] == events[2:5] and view[::10] == events[::10]
    assert len(log.view()) == len(events) + 1


def test_a_step_that_does_not_fit_the_columns_is_kept_as_it_is():
    odd = ev.StepFinished(time=1.0, step=0, epoch=0, start_time=0.5, batch_size=32, loss="nan?")  # type: ignore[arg-type]
    log = _log([odd, _step(1)])
    assert log[0] is odd and log.steps == 1 and list(log) == [odd, _step(1)]


def test_nan_loss_and_missing_learning_rate_survive():
    log = _log([_step(0, lr=None), ev.StepFinished(1.0, 1, 0, 0.5, 8, math.nan, 0.1)])
    assert log[0].learning_rate is None
    assert math.isnan(log[1].loss) and log[1].learning_rate == 0.1


def test_a_step_without_a_loss_stays_in_the_columns():
    log = _log([_step(0), ev.StepFinished(1.0, 1, 0, 0.5, 8, None, 0.1)])
    assert log.steps == 2 and log[1].loss is None and log[0].loss == 1.0
    assert log.step_columns()["loss"] == [1.0, None]


def test_a_steps_data_wait_stays_in_the_columns():
    waited = ev.StepFinished(1.0, 1, 0, 0.5, 8, 0.3, 0.1, data_wait=0.125)
    log = _log([_step(0), waited])
    assert log.steps == 2 and log[1] == waited and log[0].data_wait is None
    assert log.step_columns()["data_wait"] == [None, 0.125]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.booleans(), max_size=60), st.integers(0, 70), st.integers(0, 70))
def test_slices_match_a_list(kinds, a, b):
    events: list[ev.Event] = [
        _step(i) if is_step else ev.PhaseChanged(time=float(i), phase="training")
        for i, is_step in enumerate(kinds)
    ]
    log = _log(events)
    assert log.slice(a, b) == events[a:b]
    assert log.view()[a:b] == events[a:b]


def test_steps_take_a_quarter_of_the_memory_of_objects():
    n = 20_000
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        objects = [_step(i) for i in range(n)]
        as_objects = tracemalloc.get_traced_memory()[0] - before
        log = EventLog()
        before = tracemalloc.get_traced_memory()[0]
        for e in objects:
            log.append(e)
        in_columns = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert in_columns * 3 < as_objects, (in_columns / n, as_objects / n)


def test_past_the_budget_steps_thin_out_while_every_other_event_stays():
    from ludwig_nb.core.step_thinning import keeps_step

    events = _mixed(400)
    log = EventLog(budget=50)
    for e in events:
        log.append(e)
    kept_steps = [e for e in events if isinstance(e, ev.StepFinished) and keeps_step(e.step, 50)]
    assert log.steps == len(kept_steps) < 400 and log.steps_seen == 400
    assert log.samples_seen == 32 * 400
    assert log.others() == [e for e in events if not isinstance(e, ev.StepFinished)]
    expected = [e for e in events if not isinstance(e, ev.StepFinished) or e in kept_steps]
    assert list(log) == expected and log.step_columns()["step"] == [e.step for e in kept_steps]
