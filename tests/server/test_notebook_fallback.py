"""Saving a notebook replaces ludwig_nb dashboard widgets by readable run snapshots."""

import json

import nbformat
import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import reduce_all
from ludwig_nb.server.notebook_fallback import WIDGET_MIMETYPE, strip_live_widgets
from ludwig_nb.store import rundir


def _notebook(directory, other_widget=True):
    dashboard = nbformat.v4.new_output(
        "display_data",
        data={
            WIDGET_MIMETYPE: {"model_id": "abc", "version_major": 2, "version_minor": 0},
            "text/plain": "ludwig_nb dashboard: churn",
            "text/html": "<i>live</i>",
        },
        metadata={"ludwig_nb": {"run_id": "churn-1", "directory": str(directory)}},
    )
    other = nbformat.v4.new_output("display_data", data={WIDGET_MIMETYPE: {"model_id": "x"}})
    cell = nbformat.v4.new_code_cell("%%ludwig_config ...")
    cell.outputs = [dashboard, other] if other_widget else [dashboard]
    return nbformat.v4.new_notebook(cells=[cell])


def _write_status(directory):
    events = [
        ev.BaselineComputed(
            time=1,
            metrics={"test": {"churn": {"accuracy": 0.865}}},
            predictors={"churn": "always 'no'"},
        ),
        ev.EvaluationFinished(
            time=2,
            step=2599,
            epoch=3,
            start_time=1.5,
            improved=True,
            metrics={"test": {"churn": {"accuracy": 0.945}}},
        ),
        ev.RunFinished(time=3, status="completed", step=3100, reason="early stopping"),
    ]
    directory.mkdir()
    status = {**reduce_all(events).to_dict(), "name": "churn"}
    (directory / rundir.STATUS_FILE).write_text(json.dumps(status))


def test_a_saved_dashboard_becomes_the_runs_snapshot(tmp_path):
    run_dir = tmp_path / "churn-1"
    _write_status(run_dir)
    nb = _notebook(run_dir)
    strip_live_widgets({"type": "notebook", "content": nb}, path="a.ipynb")
    dashboard, other = nb.cells[0].outputs
    assert WIDGET_MIMETYPE not in dashboard["data"]  # never "model not found" on reopening
    text = dashboard["data"]["text/plain"]
    assert text.startswith("churn: completed, step 3,100")
    assert "stopped early: no validation improvement" in text
    assert "test churn accuracy 0.945 · always 'no': 0.865" in text
    assert 'class="ludwig-nb-snapshot"' in dashboard["data"]["text/html"]
    assert WIDGET_MIMETYPE in other["data"]  # other widgets are not ours to touch
    nbformat.validate(nb)


def test_without_a_run_directory_the_bundles_own_fallback_stays(tmp_path):
    nb = _notebook(tmp_path / "gone", other_widget=False)
    strip_live_widgets({"type": "notebook", "content": nb})
    assert nb.cells[0].outputs[0]["data"] == {
        "text/plain": "ludwig_nb dashboard: churn",
        "text/html": "<i>live</i>",
    }


@pytest.mark.parametrize("model", [{"type": "file", "content": "x"}, {"type": "notebook"}])
def test_other_saves_are_left_alone(model):
    before = dict(model)
    strip_live_widgets(model)
    assert model == before


async def test_a_real_server_saves_snapshots_through_the_contents_api(
    jp_fetch, jp_serverapp, jp_root_dir, tmp_path
):
    run_dir = tmp_path / "churn-1"
    _write_status(run_dir)
    body = json.dumps({"type": "notebook", "content": _notebook(run_dir, other_widget=False)})
    await jp_fetch("api", "contents", "saved.ipynb", method="PUT", body=body)
    saved = nbformat.read(jp_root_dir / "saved.ipynb", as_version=4)
    data = saved.cells[0].outputs[0]["data"]
    assert WIDGET_MIMETYPE not in data and "churn: completed" in data["text/plain"]


def test_the_snapshot_records_its_status_for_the_sidebar_to_refresh(tmp_path):
    run_dir = tmp_path / "churn-1"
    _write_status(run_dir)
    nb = _notebook(run_dir, other_widget=False)
    strip_live_widgets({"type": "notebook", "content": nb})
    assert nb.cells[0].outputs[0]["metadata"]["ludwig_nb"]["status"] == "completed"


def test_a_live_status_whose_process_is_gone_reads_as_interrupted(tmp_path):
    from ludwig_nb.server.notebook_fallback import read_snapshot

    run_dir = tmp_path / "churn-1"
    run_dir.mkdir()
    forecast = "at most 100 steps (early stopping); likely stops near step 70 (not before 50)"
    early = {"text": forecast}
    status = {
        "name": "churn",
        "status": "training",
        "step": 40,
        "total_steps": 100,
        "pid": 4242,
        "early_stop": early,
    }
    (run_dir / rundir.STATUS_FILE).write_text(json.dumps(status))
    alive = read_snapshot(str(run_dir), pid_alive=lambda pid: True)
    assert alive is not None and alive["status"] == "training" and alive["final"] is False
    assert forecast in alive["bundle"]["text/plain"]
    assert "snapshot taken while the run was live" in alive["bundle"]["text/plain"]
    gone = read_snapshot(str(run_dir), pid_alive=lambda pid: False)
    assert gone is not None and gone["status"] == "interrupted" and gone["final"] is True
    assert gone["bundle"]["text/plain"].startswith("churn: interrupted, step 40 / 100")
    assert "its process ended before the run did" in gone["bundle"]["text/plain"]
    assert "likely stop" not in gone["bundle"]["text/plain"]
    assert read_snapshot(str(tmp_path / "nowhere")) is None
