"""Registry entries joined with status.json, without a server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ludwig_nb.core import strict_json
from ludwig_nb.server.runs_view import KNOWN_STATUSES, find_run, list_runs, run_summary
from ludwig_nb.store import rundir
from ludwig_nb.store.registry import register_run, registry_entry


def _entry(tmp_path: Path, run_id: str, started_at: float = 1.0, pid: int = 123) -> dict:
    return registry_entry(run_id, run_id, tmp_path / run_id, pid, started_at, notebook="a.ipynb")


def test_dead_pid_with_active_status_is_interrupted(tmp_path):
    entry = _entry(tmp_path, "r1")
    rundir.write_json_atomic(
        tmp_path / "r1" / rundir.STATUS_FILE, {"status": "training", "eta": {"remaining_s": 5}}
    )
    summary = run_summary(entry, pid_alive=lambda pid: False)
    assert summary["status"] == "interrupted" and summary["eta"] is None
    assert run_summary(entry, pid_alive=lambda pid: True)["status"] == "training"


def test_final_status_stays_final_when_the_process_is_gone(tmp_path):
    entry = _entry(tmp_path, "r1")
    rundir.write_json_atomic(
        tmp_path / "r1" / rundir.STATUS_FILE, {"status": "completed", "step": 10}
    )
    summary = run_summary(entry, pid_alive=lambda pid: False)
    assert summary["status"] == "completed" and summary["step"] == 10


def test_missing_status_is_queued_while_alive(tmp_path):
    entry = _entry(tmp_path, "r1")
    assert run_summary(entry, pid_alive=lambda pid: True)["status"] == "queued"
    assert run_summary(entry, pid_alive=lambda pid: False)["status"] == "interrupted"


def test_list_runs_marks_the_runs_of_the_given_kernels(tmp_path):
    registry = tmp_path / "registry"
    for run_id, kernel in (("mine", "k-1"), ("other", "k-2"), ("script", None)):
        register_run(registry, registry_entry(run_id, run_id, tmp_path, 1, 1.0, kernel=kernel))
    runs = list_runs(registry, pid_alive=lambda pid: True, kernel_ids={"k-1"})
    assert {r["run_id"]: r["this_server"] for r in runs} == {
        "mine": True,
        "other": False,
        "script": False,
    }
    assert not any(r["this_server"] for r in list_runs(registry, pid_alive=lambda pid: True))


def test_list_runs_is_newest_first(tmp_path):
    registry = tmp_path / "registry"
    for run_id, started in (("old", 1.0), ("new", 2.0)):
        register_run(registry, _entry(tmp_path, run_id, started))
    assert [r["run_id"] for r in list_runs(registry, pid_alive=lambda pid: True)] == ["new", "old"]


def test_find_run_only_opens_registry_files(tmp_path):
    registry = tmp_path / "registry"
    register_run(registry, _entry(tmp_path, "good"))
    rundir.write_json_atomic(tmp_path / "good" / rundir.STATUS_FILE, {"run_id": "good"})
    (tmp_path / "secret.json").write_text('{"run_id": "../secret", "directory": "/"}')
    assert find_run(registry, "good") is not None
    assert find_run(registry, "../secret") is None
    assert find_run(registry, "..") is None
    assert find_run(registry, "missing") is None


@pytest.mark.parametrize(
    ("directory", "status"),
    [
        ("/", None),  # the root: holds no run
        ("home", None),  # a directory without a status.json
        ("other", {"run_id": "someone-else", "status": "training"}),  # another run's
        ("relative", {"run_id": "r1"}),  # not an absolute path
    ],
)
def test_find_run_follows_only_a_directory_that_holds_that_run(tmp_path, directory, status):
    registry = tmp_path / "registry"
    folder = Path(directory) if directory in ("/", "relative") else tmp_path / directory
    if status is not None and folder.is_absolute():
        rundir.write_json_atomic(folder / rundir.STATUS_FILE, status)
    register_run(registry, registry_entry("r1", "r1", folder, 1, 1.0))
    assert find_run(registry, "r1") is None
    summary = run_summary(rundir.read_json(registry / "r1.json"), pid_alive=lambda pid: True)
    if status is not None and directory == "other":  # its status is not shown as this run's
        assert summary["status"] == "queued" and summary["directory"] == ""
        assert "its directory holds another run's status" in summary["problems"][0]


def test_find_run_rejects_an_entry_naming_another_run(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    rundir.write_json_atomic(registry / "a.json", {"run_id": "b", "directory": str(tmp_path)})
    assert find_run(registry, "a") is None


# -- one malformed file marks only its own entry (issue 11, item 7) -----------------------
_BAD_ENTRIES = {
    "pid is text": ({"pid": "123"}, {}, "registry entry: pid '123' is not an integer"),
    "pid is huge": ({"pid": 10**30}, {}, None),
    "started_at is text": ({"started_at": "yesterday"}, {}, "started_at"),
    "name is a list": ({"name": ["a"]}, {}, "registry entry: name is a list, not text"),
    "metrics are a list": ({}, {"latest_metrics": [1, 2]}, "latest_metrics is a list"),
    "metric is text": (
        {},
        {"best_metrics": {"validation": {"y": {"loss": "low"}}}},
        "best_metrics.validation.y.loss is not a number",
    ),
    "split is a number": ({}, {"latest_metrics": {"validation": 3}}, "latest_metrics.validation"),
    "alarms are an object": ({}, {"alarms": {"a": 1}}, "alarms is a dict, not a list"),
    "alarm lacks a rule": ({}, {"alarms": [{"device": 0}]}, "alarms.0 is not an alarm"),
    "eta is a number": ({}, {"eta": 5}, "eta is a int, not an object"),
    "step is text": ({}, {"step": "ten"}, "status.json: step 'ten' is not a number"),
    "unknown status": ({}, {"status": "exploded"}, "unknown status 'exploded'"),
    "status is a list": ({}, ["training"], "status.json holds a list, not an object"),
    "status is not JSON": ({}, b"{half", "status.json is not JSON"),
    "status is binary": ({}, b"\xff\xfe", "status.json unreadable"),
    "error is a number": ({}, {"error": 7}, None),
}


@pytest.mark.parametrize("case", sorted(_BAD_ENTRIES))
def test_a_malformed_entry_is_marked_and_the_others_still_list(tmp_path, case):
    entry_changes, status, problem = _BAD_ENTRIES[case]
    registry = tmp_path / "registry"
    register_run(registry, _entry(tmp_path, "good", started_at=2.0))
    rundir.write_json_atomic(tmp_path / "good" / rundir.STATUS_FILE, {"status": "training"})
    bad = {**_entry(tmp_path, "bad", started_at=1.0), **entry_changes}
    (registry / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "bad").mkdir()
    raw = status if isinstance(status, bytes) else json.dumps(status).encode()
    (tmp_path / "bad" / rundir.STATUS_FILE).write_bytes(raw)
    runs = {r["run_id"]: r for r in list_runs(registry, pid_alive=lambda pid: pid == 123)}
    assert runs["good"]["status"] == "training" and runs["good"]["problems"] == []
    marked = runs["bad"]
    json.loads(strict_json.dumps(marked))
    if problem is None:
        assert marked["problems"] == []
    else:
        assert any(problem in p for p in marked["problems"]), marked["problems"]


_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_STATUS_KEYS = (
    "status",
    "step",
    "progress",
    "last_loss",
    "latest_metrics",
    "best_metrics",
    "alarms",
    "eta",
    "error",
    "pid",
    "nonfinite",
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entry=st.fixed_dictionaries(
        {}, optional=dict.fromkeys(("name", "pid", "started_at", "kernel"), _ANY_JSON)
    ),
    status=st.fixed_dictionaries({}, optional=dict.fromkeys(_STATUS_KEYS, _ANY_JSON)) | _ANY_JSON,
)
def test_any_status_gives_a_summary_of_the_documented_shape(tmp_path, entry, status):
    directory = tmp_path / "r"
    directory.mkdir(exist_ok=True)
    (directory / rundir.STATUS_FILE).write_text(json.dumps(status))
    summary = run_summary({"run_id": "r", "directory": str(directory), **entry}, lambda pid: True)
    json.loads(strict_json.dumps(summary), parse_constant=pytest.fail)
    assert summary["status"] in KNOWN_STATUSES
    assert all(isinstance(p, str) for p in summary["problems"] + summary["nonfinite"])
    assert isinstance(summary["pid"], int) and isinstance(summary["name"], str)
