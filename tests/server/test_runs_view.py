"""Registry entries joined with status.json, without a server."""

from __future__ import annotations

from pathlib import Path

from ludwig_nb.core import rundir
from ludwig_nb.server.runs_view import find_run, list_runs, run_summary


def _entry(tmp_path: Path, run_id: str, started_at: float = 1.0, pid: int = 123) -> dict:
    return rundir.registry_entry(
        run_id, run_id, tmp_path / run_id, pid, started_at, notebook="a.ipynb"
    )


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


def test_list_runs_is_newest_first(tmp_path):
    registry = tmp_path / "registry"
    for run_id, started in (("old", 1.0), ("new", 2.0)):
        rundir.register_run(registry, _entry(tmp_path, run_id, started))
    assert [r["run_id"] for r in list_runs(registry, pid_alive=lambda pid: True)] == ["new", "old"]


def test_find_run_only_opens_registry_files(tmp_path):
    registry = tmp_path / "registry"
    rundir.register_run(registry, _entry(tmp_path, "good"))
    (tmp_path / "secret.json").write_text('{"run_id": "../secret", "directory": "/"}')
    assert find_run(registry, "good") is not None
    assert find_run(registry, "../secret") is None
    assert find_run(registry, "..") is None
    assert find_run(registry, "missing") is None


def test_find_run_rejects_an_entry_naming_another_run(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    rundir.write_json_atomic(registry / "a.json", {"run_id": "b", "directory": str(tmp_path)})
    assert find_run(registry, "a") is None
