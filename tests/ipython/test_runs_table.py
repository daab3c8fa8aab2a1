"""``%ludwig_runs``: this kernel's runs, then live runs grouped by notebook; --live, --all."""

import os
import subprocess
import sys

import pytest

from ludwig_nb.ipython.runs_table import collect_rows, runs_table_html
from ludwig_nb.store import rundir
from ludwig_nb.store.registry import register_run, registry_entry


@pytest.fixture
def dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _register(registry, tmp_path, run_id, status, pid, notebook, started):
    directory = tmp_path / run_id
    directory.mkdir()
    rundir.write_json_atomic(
        directory / rundir.STATUS_FILE,
        {"name": run_id.split("-")[0], "status": status, "step": 5, "total_steps": 10},
    )
    entry = registry_entry(run_id, run_id.split("-")[0], directory, pid, started, notebook=notebook)
    register_run(registry, entry)


@pytest.fixture
def registry(tmp_path, dead_pid):
    registry = tmp_path / "registry"
    registry.mkdir()
    live = os.getpid()
    _register(registry, tmp_path, "zeta-20260101-000000-aaaa", "training", live, "b.ipynb", 30)
    _register(registry, tmp_path, "alpha-20260101-000000-bbbb", "training", live, "a.ipynb", 40)
    _register(registry, tmp_path, "old-20260101-000000-cccc", "completed", dead_pid, "a.ipynb", 10)
    _register(registry, tmp_path, "gone-20260101-000000-dddd", "training", dead_pid, "c.ipynb", 5)
    return registry


def test_live_runs_first_grouped_by_notebook_and_finished_ones_only_with_all(registry, monkeypatch):
    from ludwig_nb.runs import live

    monkeypatch.setattr(live, "_runs", [])  # this kernel has no runs (earlier tests' runs aside)
    names = [r["name"] for r in collect_rows(registry, now=100)]
    assert names == ["alpha", "zeta"]  # other kernels' live runs, by notebook
    everything = collect_rows(registry, now=100, which="all")
    assert [(r["name"], r["notebook"], r["state"]) for r in everything] == [
        ("alpha", "a.ipynb", "training"),
        ("zeta", "b.ipynb", "training"),
        ("old", "a.ipynb", "completed"),
        ("gone", "c.ipynb", "interrupted"),
    ]
    assert collect_rows(registry, now=100, which="all") == everything  # stable
    assert "--all" in runs_table_html(registry / "none")
    with pytest.raises(ValueError, match="which must be one of"):
        collect_rows(registry, which="mine")
