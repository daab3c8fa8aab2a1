"""DataProgress in words, and into RunState.phase_detail (so into status.json)."""

from ludwig_nb.core import events as ev
from ludwig_nb.core.progress_text import data_progress_text
from ludwig_nb.core.state import reduce_all


def _progress(**fields):
    return ev.DataProgress(time=1.0, **fields)


def test_each_stage_has_its_line():
    assert data_progress_text(_progress(stage="reading", source="demo:churn")) == (
        "reading demo:churn"
    )
    read = _progress(stage="read", source="demo:churn", rows=7043, columns=21)
    assert data_progress_text(read) == "demo:churn · 7,043 rows × 21 columns"
    feature = _progress(stage="preprocessing", feature="Contract", index=5, total=20, rows=4930)
    assert data_progress_text(feature) == "feature 5 of 20 (Contract) · 4,930 rows"
    assert data_progress_text(_progress(stage="loading", source="torch")) == "loading torch"
    assert data_progress_text(_progress(stage="building")) == "building the model"
    assert data_progress_text(_progress(stage="read", source="x.csv")) == "x.csv"


def test_the_reducer_shows_the_latest_progress_until_training_starts():
    schedule = ev.ScheduleInfo(total_steps=4, steps_per_epoch=2, epochs=2, batch_size=8)
    events = [
        ev.PhaseChanged(time=0.0, phase="queued"),
        _progress(stage="reading", source="demo:churn"),
        _progress(stage="read", source="demo:churn", rows=5000, columns=21),
    ]
    state = reduce_all(events)
    assert (state.status, state.phase_detail) == (
        "preprocessing",
        "demo:churn · 5,000 rows × 21 columns",
    )
    started = ev.RunStarted(
        time=2.0, run_id="r", name="r", engine="builtin", device="cpu", schedule=schedule
    )
    late = reduce_all([*events, started, _progress(stage="building")])
    assert late.status == "training"  # a late progress event never turns training back


def test_it_round_trips_through_json():
    event = _progress(stage="preprocessing", feature="x", index=1, total=2, rows=10)
    assert ev.event_from_json(event.to_json()) == event
