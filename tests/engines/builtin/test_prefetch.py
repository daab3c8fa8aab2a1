"""The prefetch process: a real child reads, checks and preprocesses as this process would."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ludwig_nb.data import DataError, DataWarning, check_dataset, split_dataset
from ludwig_nb.data.baseline import trivial_baseline
from ludwig_nb.engines.builtin import prefetch
from ludwig_nb.engines.builtin.engine import BuiltinEngine
from ludwig_nb.engines.builtin.setup import prepare_splits
from ludwig_nb.engines.builtin.splits import prepare_arrays
from tests.engines.builtin.conftest import make_config, table

ROOT = Path(__file__).resolve().parents[3]
INPUTS = [
    {"name": "x", "type": "number"},
    {"name": "colour", "type": "category"},
    {"name": "text", "type": "text"},
]
OUTPUTS = [{"name": "label", "type": "binary"}]


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "data.csv"
    table(rows=120).to_csv(path, index=False)
    return path


def _same_arrays(left, right):
    assert left.keys() == right.keys()
    for split in left:
        assert left[split].keys() == right[split].keys(), split
        for key, parts in left[split].items():
            for a, b in zip(parts, right[split][key], strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b), (split, key)


def test_the_child_prepares_what_this_process_would(csv):
    config = make_config(INPUTS, OUTPUTS)
    handle = prefetch.Prefetch(config, str(csv), 7).checked()
    assert (handle.rows, handle.columns) == (120, 12)
    frame = check_dataset(config, str(csv))
    metrics, predictors = trivial_baseline(config, split_dataset(frame, {}, 7))
    assert handle.baseline() == (metrics, predictors)
    told = []
    fitted, arrays = handle.arrays(7, None, lambda *feature: told.append(feature))
    here_told = []
    here = prepare_arrays(config, frame, 7, None, lambda *feature: here_told.append(feature))
    assert fitted == here[0]
    _same_arrays(arrays, here[1])
    assert told == here_told and [t[2] for t in told] == ["x", "colour", "text", "label"]


def test_a_data_error_in_the_child_is_raised_here_word_for_word(tmp_path):
    frame = table(rows=40)
    frame["x"] = frame["x"].astype(object)
    frame.loc[5, "x"] = "twelve"  # text in a number column
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    config = make_config(INPUTS, OUTPUTS)
    with pytest.raises(DataError) as here:
        check_dataset(config, str(path))
    with pytest.raises(DataError) as there:
        prefetch.Prefetch(config, str(path), 42).checked()
    assert str(there.value) == str(here.value) and "twelve" in str(here.value)


def test_the_checks_data_warnings_are_warned_in_this_process(tmp_path):
    frame = table(rows=40)
    frame["colour"] = None  # an input with no values
    path = tmp_path / "empty_input.csv"
    frame.to_csv(path, index=False)
    config = make_config(INPUTS, OUTPUTS)
    with pytest.warns(DataWarning, match="input column 'colour' has no values"):
        prefetch.Prefetch(config, str(path), 42).checked().close()


def test_a_child_that_dies_at_once_is_lost_and_the_engine_reads_the_file_itself(csv, monkeypatch):
    monkeypatch.setattr(
        prefetch, "_child_command", lambda: [sys.executable, "-c", "raise SystemExit(3)"]
    )
    config = make_config(INPUTS, OUTPUTS)
    with pytest.raises(prefetch.PrefetchLost):
        prefetch.Prefetch(config, str(csv), 42).checked()
    monkeypatch.setattr(prefetch, "wanted", lambda dataset: True)
    data = BuiltinEngine().prepare_data(config, str(csv))
    assert type(data).__name__ == "DataFrame" and len(data) == 120


def test_a_child_lost_after_its_check_leaves_the_preprocessing_to_this_process(csv, monkeypatch):
    # a child that answers the check, then dies before the arrays
    code = (
        "import pickle, sys; pickle.load(sys.stdin.buffer); "
        "pickle.dump(('checked', {'rows': 120, 'columns': 12, 'warnings': [], 'logs': []}), "
        "sys.stdout.buffer); sys.stdout.flush(); raise SystemExit(9)"
    )
    monkeypatch.setattr(prefetch, "_child_command", lambda: [sys.executable, "-c", code])
    config = make_config(INPUTS, OUTPUTS)
    handle = prefetch.Prefetch(config, str(csv), 42).checked()
    assert handle.baseline() is None
    fitted, tensors = prepare_splits(config, handle, 42)
    here, here_tensors = prepare_splits(config, str(csv), 42)
    assert fitted == here
    assert {k: v.rows for k, v in tensors.items()} == {k: v.rows for k, v in here_tensors.items()}


@pytest.mark.parametrize("why", ["another seed", "saved metadata"])
def test_arrays_cut_for_another_run_are_not_served(csv, why):
    config = make_config(INPUTS, OUTPUTS)
    handle = prefetch.Prefetch(config, str(csv), 42).checked()
    if why == "another seed":
        assert handle.arrays(43) is None
    else:
        assert handle.arrays(42, {"features": {}}) is None
    assert handle._proc.poll() is not None  # ended, not left running


def test_wanted_only_for_a_file_while_the_engine_is_not_loaded(monkeypatch, csv):
    monkeypatch.setattr(prefetch, "_in_this_process", prefetch.threading.Event())  # no kernel
    monkeypatch.setattr(prefetch, "engine_loaded", lambda: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert prefetch.wanted(str(csv), {}) and prefetch.wanted(csv, {})
    assert not prefetch.wanted(str(csv), {prefetch.ENV_VAR: "0"})
    assert not prefetch.wanted(table(rows=4), {})
    assert not prefetch.wanted({"training": str(csv)}, {})
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one core: a child only adds work
    assert not prefetch.wanted(str(csv), {})
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(prefetch, "engine_loaded", lambda: True)  # torch is there already
    assert not prefetch.wanted(str(csv), {})


CLI_RUN = """
import json, sys
from ludwig_nb.cli import main
rc = main(["train", "-c", "config.yaml", "-d", "data.csv", "-o", "out", "--no-progress",
           "--threads", "1", "--json"])
print(json.dumps({"rc": rc, "pandas": "pandas" in sys.modules}))
"""


def test_a_fresh_cli_run_trains_the_same_and_never_loads_pandas_itself(tmp_path):
    """The point of the child: the training process imports torch while it reads."""
    table(rows=300).to_csv(tmp_path / "data.csv", index=False)
    config = {
        "input_features": INPUTS,
        "output_features": OUTPUTS,
        "trainer": {"epochs": 2, "batch_size": 32},
    }
    (tmp_path / "config.yaml").write_text(json.dumps(config))
    runs = {}
    for setting in ("1", "0"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), prefetch.ENV_VAR: setting}
        out = subprocess.run(
            [sys.executable, "-c", CLI_RUN],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        *metrics, verdict = out.stdout.strip().splitlines()
        events = next((tmp_path / "out").glob("*/events.ndjson"))
        losses = [
            e["loss"]
            for e in map(json.loads, events.read_text().splitlines())
            if e["type"] == "step_finished"
        ]
        runs[setting] = (json.loads(verdict), "\n".join(metrics).split("\n", 1)[1], losses)
        for run_dir in (tmp_path / "out").iterdir():
            run_dir.rename(tmp_path / f"{setting}-{run_dir.name}")
    (child, child_metrics, child_losses), (alone, alone_metrics, alone_losses) = runs.values()
    assert child == {"rc": 0, "pandas": False} and alone == {"rc": 0, "pandas": True}
    assert child_losses == alone_losses and len(child_losses) > 10
    assert child_metrics == alone_metrics


def test_a_run_stopped_while_its_child_preprocesses_ends_the_child_and_reads_nothing(
    csv, tmp_path, monkeypatch
):
    import threading

    from ludwig_nb.engines.builtin import splits
    from ludwig_nb.runs import train
    from tests.runs.conftest import until

    # a child that answers the check and the baseline, then preprocesses for a minute
    code = (
        "import pickle, sys, time; pickle.load(sys.stdin.buffer); out = sys.stdout.buffer; "
        "pickle.dump(('checked', {'rows': 120, 'columns': 12, 'warnings': [], 'logs': []}), out); "
        "pickle.dump(('baseline', None), out); out.flush(); time.sleep(60)"
    )
    monkeypatch.setattr(prefetch, "_child_command", lambda: [sys.executable, "-c", code])
    monkeypatch.setattr(prefetch, "wanted", lambda dataset: True)
    read_here = []
    real = splits.prepare_arrays
    monkeypatch.setattr(
        splits, "prepare_arrays", lambda *a, **k: read_here.append(1) or real(*a, **k)
    )
    config = make_config(INPUTS, OUTPUTS)
    run = train(config, str(csv), results_dir=tmp_path / "r", registry_dir=tmp_path / "g")
    handle = run._job.dataset
    assert isinstance(handle, prefetch.Prefetch)
    until(lambda: run.status == "preprocessing")
    run.stop()
    assert run.wait(30).status == "stopped"
    assert handle._proc.poll() is not None  # the child is gone
    for thread in threading.enumerate():  # the abandoned setup thread ends without a read
        if thread.name == f"ludwig_nb-setup-{run.id}":
            thread.join(30)
    assert read_here == []
