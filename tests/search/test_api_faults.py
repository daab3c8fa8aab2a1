"""Faults of ``hyperopt()``: bad values refused at their line, a damaged journal, two searches
on one folder, names that try to leave the results directory, statistics that cannot be written.
Every one is a clear error or the search goes on; none hangs or writes where it should not."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import pytest

from ludwig_nb.config import ConfigError
from ludwig_nb.search import (
    JOURNAL_FILE,
    STATISTICS_FILE,
    JournalWarning,
    SearchBusyError,
    hyperopt,
)
from ludwig_nb.search.lock import LOCK_FILE
from tests.runs.conftest import ab_frame, until

HEAD = """\
input_features:
  - {name: a, type: number, preprocessing: {missing_value_strategy: fill_with_const}}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: EPOCHS, batch_size: 16}
hyperopt:
"""


def _config(body: str, epochs: int = 1) -> str:
    epochs_text = f"{epochs}, early_stop: -1" if epochs >= 100 else str(epochs)
    return HEAD.replace("EPOCHS", epochs_text) + textwrap.indent(textwrap.dedent(body), "  ")


ONE_TRIAL = """\
parameters:
  trainer.learning_rate: {space: choice, categories: [0.05]}
executor: {num_samples: 1}
"""


@pytest.fixture
def df():
    return ab_frame(120)


def _search(config, df, tmp_path, **kwargs):
    return hyperopt(
        config,
        df,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        **kwargs,
    )


@pytest.mark.parametrize(
    ("space", "where", "words"),
    [
        (
            "a.preprocessing.fill_value: {space: grid_search, values: [1.0, .nan]}",
            "values[1]",
            "a trial with nan would be refused: input_features[0].preprocessing.fill_value "
            "must be a number, not NaN",
        ),
        (
            "trainer.batch_size: {space: choice, categories: [16, -4]}",
            "categories[1]",
            "a trial with -4 would be refused: trainer.batch_size must be >= 1, got -4",
        ),
        (
            "trainer.batch_size: {space: randint, lower: -3, upper: 64}",
            "lower",
            "trainer.batch_size must be >= 1, got -3",
        ),
        (
            "trainer.batch_size: {space: uniform, lower: 8, upper: 64}",
            "space",
            "space uniform draws values such as",
        ),
        (
            "b.encoder.type: {space: choice, categories: [dense, nope]}",
            "categories[1]",
            "unknown encoder 'nope'",
        ),
    ],
)
def test_a_bad_value_in_the_space_is_refused_at_its_line_before_anything_starts(
    df, tmp_path, space, where, words
):
    config = _config(f"parameters:\n  {space}\nexecutor: {{num_samples: 2}}\n")
    with pytest.raises(ConfigError) as info:
        _search(config, df, tmp_path, name="bad")
    err = info.value
    assert err.line == 9 and err.path.endswith(where), (err.line, err.path)
    assert words in str(err) and "^" in str(err)  # the value's line, with a caret
    assert not (tmp_path / "results").exists()  # nothing written, no thread


def test_the_did_you_mean_hint_is_said_once(df, tmp_path):
    config = _config("parameters:\n  trainer.learnin_rate: {space: choice, categories: [0.1]}\n")
    with pytest.raises(ConfigError) as info:
        _search(config, df, tmp_path)
    assert info.value.hint == "did you mean 'learning_rate'?"
    assert str(info.value).count("did you mean") == 1


def test_journal_lines_that_are_not_entries_are_skipped_with_warnings_naming_file_and_line(
    df, tmp_path
):
    folder = tmp_path / "results" / "damaged"
    folder.mkdir(parents=True)
    finished = {
        "time": 2.0,
        "event": "trial_finished",
        "trial": 0,
        "state": "completed",
        "metric": 0.4,
    }
    lines = [
        "[1, 2]",
        '"text"',
        "garbage",
        json.dumps(
            {
                "time": 1.0,
                "event": "trial_started",
                "trial": 0,
                "params": {"trainer.learning_rate": 0.05},
            }
        ),
        json.dumps(finished),
        json.dumps({"time": 3.0, "event": "trial_finished", "trial": 0, "state": 7}),
    ]
    (folder / JOURNAL_FILE).write_text("\n".join(lines) + "\n")
    config = _config(ONE_TRIAL.replace("num_samples: 1", "num_samples: 2"))
    with pytest.warns(JournalWarning) as caught:
        search = _search(config, df, tmp_path, name="damaged", wait=True)
    said = [str(w.message) for w in caught]
    path = folder / JOURNAL_FILE
    assert (
        said[0]
        == f"{path}, line 1: a JSON list, not a journal entry (an object); the line is skipped"
    )
    assert said[1].startswith(f"{path}, line 2: a JSON string")
    assert said[2].startswith(f"{path}, line 3: not a JSON line")
    assert said[3].startswith(f"{path}, line 6: an entry with a missing or wrong field")
    assert len(said) == 4
    assert search.error is None
    # the finished trial of the journal stands (never rerun); one new trial made up the two
    assert [t.state for t in search.records()] == ["completed", "completed"]
    assert search.records()[0].metric == 0.4 and search.records()[0].run is None


def test_a_second_search_on_a_running_searchs_folder_is_refused_naming_it(df, tmp_path):
    config = _config(ONE_TRIAL, epochs=400)
    first = _search(config, df, tmp_path, name="one")
    try:
        until(lambda: first.records() and first.records()[0].curve, timeout=120)
        with pytest.raises(SearchBusyError) as info:
            _search(config, df, tmp_path, name="one")
        text = str(info.value)
        assert str(tmp_path / "results" / "one") in text and "this process" in text
        journal = (tmp_path / "results" / "one" / JOURNAL_FILE).read_text()
        assert journal.count('"trial_started"') == 1  # the second wrote nothing
    finally:
        first.stop()
        first.wait(120)
    assert first.is_done
    again = _search(config.replace("400, early_stop: -1", "1"), df, tmp_path, name="one2")
    assert again.wait(120).is_done  # another name runs at once


_HOLDER = """
import sys, time
from pathlib import Path
from ludwig_nb.search.lock import SearchLock
lock = SearchLock(Path(sys.argv[1])).acquire()  # held while the process lives
print("held", flush=True)
time.sleep(600)
"""


def test_a_search_folder_held_by_another_process_names_it_and_a_killed_holder_frees_it(
    df, tmp_path
):
    folder = tmp_path / "results" / "shared"
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(folder)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SearchBusyError) as info:
            _search(_config(ONE_TRIAL), df, tmp_path, name="shared")
        assert f"process {holder.pid} on " in str(info.value)
        assert not (folder / JOURNAL_FILE).exists()
    finally:
        holder.send_signal(signal.SIGKILL)  # a crash: the OS releases the lock
        holder.wait(30)
        holder.stdout.close()
    search = _search(_config(ONE_TRIAL), df, tmp_path, name="shared", wait=True)
    assert search.error is None and search.counts()["completed"] == 1
    assert (folder / LOCK_FILE).exists()  # the file stays; the lock is what is released


@pytest.mark.parametrize("name", ["../../escape", "/", "..", "a/../../b"])
def test_a_search_name_never_leaves_the_results_directory(df, tmp_path, name):
    work = tmp_path / "work"
    work.mkdir()
    search = _search(_config(ONE_TRIAL), df, work, name=name, wait=True)
    assert search.error is None
    results = (work / "results").resolve()
    assert search.directory.parent == results
    assert "/" not in search.name
    for trial in search.records():
        assert str(results) in trial.run_dir
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert sorted(p.name for p in work.iterdir()) == ["registry", "results"]


def test_statistics_that_cannot_be_written_never_hang_the_search(df, tmp_path):
    folder = tmp_path / "results" / "stats"
    (folder / STATISTICS_FILE).mkdir(parents=True)  # a folder where the file goes
    search = _search(_config(ONE_TRIAL), df, tmp_path, name="stats")
    assert search.wait(120).is_done
    assert search.error is None and search.counts()["completed"] == 1
    assert isinstance(search.statistics_error, OSError)
    # the journal holds the result; the folder is free for the next search
    assert '"trial_finished"' in (folder / JOURNAL_FILE).read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = _search(_config(ONE_TRIAL), df, tmp_path, name="stats", wait=True)
    assert again.error is None
