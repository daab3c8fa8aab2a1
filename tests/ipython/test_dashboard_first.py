"""A cell's dashboard comes before its dataset is read; a data mistake is still the cell's error.

Through a real IPython shell with a front end (a kernel attribute, as in ipykernel): the
magic's real path (check, dashboard, start, the run's thread reading the data). The one
seam is the engine's read, made to wait until the dashboard has been published.
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.error import UsageError

from ludwig_nb.data import demo_dataset
from ludwig_nb.engines.builtin.engine import BuiltinEngine

WIDGET = "application/vnd.jupyter.widget-view+json"
CHURN = """\
input_features:
  - {name: international_plan, type: binary}
  - {name: total_day_minutes, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
trainer: {epochs: 1, batch_size: 256}
"""


class _Recorder(CapturingDisplayPublisher):
    """The shell's display publisher, telling when the dashboard's widget was published."""

    def __init__(self) -> None:
        super().__init__()
        self.dashboard_shown = threading.Event()
        self.bundles: list[dict[str, Any]] = []

    def publish(self, data: Any, metadata: Any = None, source: Any = None, **kwargs: Any) -> None:
        self.bundles.append(dict(data))
        if WIDGET in data:
            self.dashboard_shown.set()
        super().publish(data, metadata, source, **kwargs)


@pytest.fixture
def front_end(ip, monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(ip, "display_pub", recorder)
    monkeypatch.setattr(ip, "kernel", object(), raising=False)  # a front end: widgets mode
    return recorder


def _reads_after(recorder: _Recorder, monkeypatch) -> list[bool]:
    """Make the engine's read wait (30 s at most) for the dashboard; what it saw, per read."""
    seen: list[bool] = []
    read = BuiltinEngine.prepare_data

    def waiting(self: BuiltinEngine, config: Any, dataset: Any) -> Any:
        seen.append(recorder.dashboard_shown.wait(30))
        return read(self, config, dataset)

    monkeypatch.setattr(BuiltinEngine, "prepare_data", waiting)
    return seen


def test_the_dashboard_is_published_before_the_dataset_is_read(ip, front_end, monkeypatch):
    seen = _reads_after(front_end, monkeypatch)
    ip.run_cell_magic("ludwig_config", "--dataset demo:churn --name first", CHURN)
    run = ip.user_ns["first"].wait(300)
    assert seen == [True]  # the read began only once the widget was in the cell
    assert run.status == "completed", run.error
    kinds = [e.type for e in run.events]
    assert kinds.index("data_progress") < kinds.index("run_started")


def test_progress_events_come_in_order_with_the_real_row_and_feature_counts(ip, front_end):
    ip.run_cell_magic("ludwig_config", "--dataset demo:churn --name counted", CHURN)
    run = ip.user_ns["counted"].wait(300)
    assert run.status == "completed", run.error
    table = pd.read_csv(demo_dataset("churn"))
    progress = [e for e in run.events if e.type == "data_progress"]
    stages = [e.stage for e in progress if e.stage != "loading"]  # torch may be loaded already
    assert stages == ["reading", "read", *["preprocessing"] * 4, "building"]
    read = progress[[e.stage for e in progress].index("read")]
    assert (read.source, read.rows, read.columns) == ("demo:churn", len(table), table.shape[1])
    features = [e for e in progress if e.stage == "preprocessing"]
    assert [(e.index, e.total) for e in features] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [e.feature for e in features] == [
        "international_plan",
        "total_day_minutes",
        "number_customer_service_calls",
        "churn",
    ]
    # fitted on every split's rows, as Ludwig fits
    assert {e.rows for e in features} == {len(table)}
    times = [e.time for e in progress]
    assert times == sorted(times)


def test_a_bad_value_found_by_the_read_is_the_cells_error_and_leaves_nothing(
    ip, front_end, tmp_path, monkeypatch
):
    ip.user_ns["df"] = pd.DataFrame({"x": ["1.5", "abc"] * 20, "y": [0, 1] * 20})
    config = "input_features: [{name: x, type: number}]\noutput_features: [{name: y, type: binary}]"
    seen = _reads_after(front_end, monkeypatch)
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ludwig_config", "--dataset df --name bad", config)
    assert seen == [True]  # found on the run's thread, after the dashboard was up
    assert "'x'" in str(info.value) and "abc" in str(info.value)
    assert "bad" not in ip.user_ns  # no handle to a run that never was
    assert front_end.bundles[-1] == {"text/plain": "", "text/html": ""}  # the dashboard taken back
    assert not list((tmp_path / "results").glob("bad-*"))  # no run directory left
    from ludwig_nb.runs import live

    assert all(r.name != "bad" for r in live.all_runs())


def test_a_column_typo_in_a_csv_header_fails_before_any_dashboard(ip, front_end):
    config = CHURN.replace("total_day_minutes", "total_day_minute")
    with pytest.raises(UsageError, match="did you mean 'total_day_minutes'"):
        ip.run_cell_magic("ludwig_config", "--dataset demo:churn --name typo", config)
    assert not front_end.dashboard_shown.is_set()
