"""What a run directory says about the run to resume: config, dataset and name."""

import json
import os

from ludwig_nb.core.ludwig_results import DESCRIPTION_FILE
from ludwig_nb.runs.resume import recorded_dataset, resumed_run
from ludwig_nb.store import rundir


def test_a_run_directory_names_its_config_dataset_and_name(tmp_path):
    (tmp_path / rundir.CONFIG_FILE).write_text("trainer: {epochs: 2}\n", encoding="utf-8")
    (tmp_path / DESCRIPTION_FILE).write_text(json.dumps({"dataset": "/data/d.csv"}))
    (tmp_path / rundir.STATUS_FILE).write_text(json.dumps({"name": "churn"}))
    found = resumed_run(tmp_path)
    assert (found.config, found.dataset, found.name) == (
        "trainer: {epochs: 2}\n",
        "/data/d.csv",
        "churn",
    )


def test_what_a_directory_lacks_is_none(tmp_path):
    (tmp_path / DESCRIPTION_FILE).write_text(json.dumps({"dataset": ""}))
    (tmp_path / rundir.STATUS_FILE).write_text("not json")
    found = resumed_run(tmp_path)
    assert (found.config, found.dataset, found.name) == (None, None, None)


def test_a_dataset_path_is_recorded_absolute_and_other_datasets_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("a\n1\n")
    assert recorded_dataset("d.csv") == str(tmp_path / "d.csv")
    assert recorded_dataset(type(tmp_path)("d.csv")) == str(tmp_path / "d.csv")
    assert recorded_dataset("demo:churn") == "demo:churn"
    assert recorded_dataset("missing.csv") == "missing.csv"
    frames = {"training": object()}
    assert recorded_dataset(frames) is frames
    assert os.path.isabs(recorded_dataset("d.csv"))
