"""The dashboard's workers row: one cell per rank, from RunState.workers."""

from __future__ import annotations

from ludwig_nb.ui.workers_row import WorkersRow, workers_row_html

WORKERS = (
    {
        "rank": 1,
        "host": "beta",
        "device": "cpu",
        "gpu": None,
        "steps": 1200,
        "steps_per_s": 41.25,
        "idle_s": 0.0,
        "age_s": 0.4,
    },
    {
        "rank": 0,
        "host": "alpha<1>",
        "device": "cuda:0",
        "gpu": 2,
        "steps": 1201,
        "steps_per_s": None,
        "idle_s": 3.5,
        "age_s": 9.0,
    },
)


def test_each_rank_shows_its_host_device_steps_and_rate_in_rank_order():
    text = workers_row_html(WORKERS)
    first, second = text.index("rank 0"), text.index("rank 1")
    assert first < second
    assert "alpha&lt;1&gt;" in text and "cuda:0 (GPU 2)" in text
    assert "1,201 steps" in text and "– steps/s" in text and "41.2 steps/s" in text
    assert "idle 3.5 s" in text and "silent 9 s" in text  # rank 0 went quiet
    assert text.count("silent") == 1 and text.count("idle") == 1


def test_a_single_process_run_has_no_row_and_the_widget_writes_only_changes():
    assert workers_row_html(()) == ""
    row = WorkersRow()
    assert row.writes(()) == {}
    writes = row.writes(WORKERS)
    assert list(writes.values()) == [{"value": workers_row_html(WORKERS)}]
    assert row.writes(WORKERS) == {}


def test_the_dashboard_shows_the_workers_a_run_reports(run, clock) -> None:
    from ludwig_nb.core import events as ev
    from ludwig_nb.ui.dashboard import Dashboard
    from tests.ui.conftest import T0, started, steps

    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 3, T0))
    dash.refresh(now=1.0)
    assert dash.workers_row.widget.value == ""  # one process: no row
    run.emit(ev.WorkersReported(time=T0 + 1, workers=WORKERS))
    dash.refresh(now=1.25)
    assert dash.workers_row.widget.value == workers_row_html(WORKERS)
    assert dash.workers_row.widget in dash.widget.children
