"""Faults under ``%%ludwig_config`` in a real IPython shell (issue 11): one line that
names the path or column and the fix, no traceback, nothing half-made left behind."""

import os

import numpy as np
import pandas as pd
import pytest
from IPython.utils.capture import capture_output

CELL = """\
input_features:
  - {name: x, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 1, batch_size: 8}
"""


@pytest.fixture
def frame(ip):
    ip.user_ns["df"] = pd.DataFrame({"x": np.linspace(0, 1, 40), "y": [0, 1] * 20})
    return ip.user_ns["df"]


def _one_line_error(ip, options, cell=CELL):
    """Run the cell as a user does; the error shown, which must be one UsageError line."""
    with capture_output() as captured:
        result = ip.run_cell(f"%%ludwig_config --dataset df {options}\n" + cell)
    assert not result.success
    assert "Traceback" not in captured.stderr and "Error:" in captured.stderr
    lines = [line for line in captured.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, captured.stderr
    return lines[0]


def test_a_results_dir_that_is_a_file_is_one_line_and_leaves_nothing(ip, frame, tmp_path):
    blocker = tmp_path / "results_file"
    blocker.write_text("not a directory")
    line = _one_line_error(ip, f"--results-dir {blocker}")
    assert f"cannot use {blocker} as the results directory: it is a file" in line
    assert "results_dir" in line  # the fix
    assert blocker.read_text() == "not a directory"


def test_a_results_dir_under_a_file_names_the_file(ip, frame, tmp_path):
    blocker = tmp_path / "results_file"
    blocker.write_text("")
    line = _one_line_error(ip, f"--results-dir {blocker / 'deeper' / 'runs'}")
    assert f"cannot use {blocker} as the results directory: it is a file" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_results_dir_is_one_line(ip, frame, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    line = _one_line_error(ip, f"--results-dir {locked}")
    assert f"cannot write the results directory {locked}: permission denied" in line
    assert list(locked.iterdir()) == []


def test_an_unwritable_runtime_dir_is_one_line_and_leaves_no_run_directory(
    ip, frame, tmp_path, monkeypatch
):
    runtime = tmp_path / "runtime_file"
    runtime.write_text("")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    results = tmp_path / "results"
    line = _one_line_error(ip, f"--results-dir {results}")
    assert "as the run registry: it is a file" in line and "JUPYTER_RUNTIME_DIR" in line
    assert not results.exists() or list(results.iterdir()) == []


def test_duplicate_columns_are_one_line_not_an_attribute_error(ip, frame):
    ip.user_ns["df"] = pd.concat([frame, frame[["x"]]], axis=1)
    line = _one_line_error(ip, "")
    assert "duplicate column names 'x' (2 times)" in line and "AttributeError" not in line


def test_an_infinite_input_is_one_line_before_the_run(ip, frame):
    frame.loc[4, "x"] = np.inf
    line = _one_line_error(ip, "")
    assert "number column 'x' has 1 infinite value (row 4: inf)" in line


SEARCH_CELL = (
    CELL
    + """\
hyperopt:
  parameters:
    trainer.learning_rate: {space: choice, categories: [0.05]}
"""
)


def _one_line_search_error(ip, options, cell=SEARCH_CELL):
    with capture_output() as captured:
        result = ip.run_cell(f"%%ludwig_hyperopt --dataset df {options}\n" + cell)
    assert not result.success
    assert "Traceback" not in captured.stderr and "Error:" in captured.stderr
    lines = [line for line in captured.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, captured.stderr
    return lines[0]


def test_a_search_in_a_results_dir_that_is_a_file_is_one_line(ip, frame, tmp_path):
    pytest.importorskip("optuna")
    blocker = tmp_path / "results_file"
    blocker.write_text("")
    line = _one_line_search_error(ip, f"--results-dir {blocker}")
    assert f"cannot use {blocker} as the results directory: it is a file" in line


def test_a_search_with_an_unwritable_registry_is_one_line_before_any_trial(
    ip, frame, tmp_path, monkeypatch
):
    pytest.importorskip("optuna")
    runtime = tmp_path / "runtime_file"
    runtime.write_text("")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    line = _one_line_search_error(ip, "--name reg")
    assert "as the run registry: it is a file" in line and "JUPYTER_RUNTIME_DIR" in line
    assert not (tmp_path / "results" / "reg").exists()


def test_a_search_folder_in_use_is_one_line_naming_it(ip, frame, tmp_path):
    pytest.importorskip("optuna")
    from ludwig_nb.search.lock import SearchLock

    folder = tmp_path / "results" / "busy"
    folder.mkdir(parents=True)
    lock = SearchLock(folder).acquire()
    try:
        line = _one_line_search_error(ip, "--name busy")
    finally:
        lock.release()
    assert f"the search folder {folder} is in use by another search (this process" in line


def test_a_bad_value_in_the_space_is_a_located_error_at_the_cells_line(ip, frame, tmp_path):
    pytest.importorskip("optuna")
    cell = SEARCH_CELL.replace("[0.05]", "[0.05, .nan]")
    with capture_output() as captured:
        result = ip.run_cell(f"%%ludwig_hyperopt --dataset df\n{cell}")
    assert not result.success and "Traceback" not in captured.stderr
    first, source, caret, _hint = captured.stderr.strip().splitlines()
    assert first.startswith(
        "UsageError: line 9, hyperopt.parameters.trainer.learning_rate.categories[1]: "
        "a trial with nan would be refused: trainer.learning_rate must be a number, not NaN"
    )
    assert ".nan]" in source and caret.strip() == "^"
    assert not (tmp_path / "results").exists()


def test_a_search_name_that_climbs_stays_in_the_results_dir(ip, frame, tmp_path):
    pytest.importorskip("optuna")
    with capture_output():
        ip.run_cell(f"%%ludwig_hyperopt --dataset df --name ../../up --wait\n{SEARCH_CELL}")
    search = ip.user_ns["_ludwig_search"]
    assert search.directory == (tmp_path / "results" / "up").resolve()
    assert search.error is None and not (tmp_path.parent / "up").exists()


def test_compare_of_a_damaged_run_is_one_line_naming_the_file(ip, frame, tmp_path):
    run = tmp_path / "ludwig_run"
    run.mkdir()
    (run / "training_statistics.json").write_text('{"training": {"y": {"loss": 5}}}')
    other = tmp_path / "other"
    other.mkdir()
    (other / "training_statistics.json").write_text('{"training": {"y": {"loss": [1]}}}')
    with capture_output() as captured:
        result = ip.run_cell(f"%ludwig_compare {other} {run}")
    assert not result.success and "Traceback" not in captured.stderr
    assert captured.stderr.strip() == (
        f"UsageError: {run}/training_statistics.json: training.y.loss is a number, where a "
        "list of numbers belongs (one value per evaluation)"
    )


def test_a_dataset_linked_to_a_private_file_is_refused_without_its_content(ip, tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$Zq9p2Lx0$never.echoed:20228:0:99999:7:::\n")
    link = tmp_path / "data.csv"
    link.symlink_to(secret)
    with capture_output() as captured:
        result = ip.run_cell(f"%%ludwig_config --dataset {link}\n{CELL}")
    assert not result.success and "Traceback" not in captured.stderr
    shown = captured.stderr + "".join(str(o.data) for o in captured.outputs)
    assert "Zq9p2Lx0" not in shown and "never.echoed" not in shown  # nor in a saved notebook
    assert "none of the config's columns ('x', 'y') is in its header" in captured.stderr


def test_a_dataset_that_is_a_directory_says_so(ip, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.csv").write_text("x,y\n1,0\n")
    with capture_output() as captured:
        ip.run_cell(f"%%ludwig_config --dataset {tmp_path / 'data'}\n{CELL}")
    assert captured.stderr.strip() == (
        f"UsageError: {tmp_path / 'data'}: is a directory, not a table file: pass one of its "
        "files (it holds train.csv)"
    )
