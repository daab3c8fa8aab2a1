"""What the sidebar knows about runs: registry entries joined with each run's status.json.

The server finds runs only through the registry (one pointer file per run under the
Jupyter runtime directory) and never scans the disk. A run whose process is gone while
its status is still active is reported as ``"interrupted"``. Everything here is plain file
I/O; handlers call it off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ludwig_nb.core import rundir
from ludwig_nb.core.state import FINAL_STATUSES

__all__ = ["INTERRUPTED", "find_run", "list_runs", "run_summary"]

INTERRUPTED = "interrupted"

#: status.json fields passed through to the sidebar unchanged (see docs/CONTRACTS.md)
_STATUS_FIELDS = (
    "step",
    "total_steps",
    "epoch",
    "epochs",
    "steps_per_epoch",
    "batch_size",
    "progress",
    "last_loss",
    "latest_metrics",
    "best_metrics",
    "baseline",
    "baseline_predictors",
    "best_step",
    "evaluations_since_best",
    "alarms",
    "engine",
    "device",
    "updated_at",
    "finished_at",
    "written_at",
    "paused_seconds",
    "pause_reason",
    "reason",
    "error",
    "eta",
)


def _status_name(status: Mapping[str, Any] | None, alive: bool) -> str:
    name = str(status.get("status") or "queued") if status else "queued"
    if name not in FINAL_STATUSES and not alive:
        return INTERRUPTED
    return name


def run_summary(
    entry: Mapping[str, Any], pid_alive: Callable[[int], bool] = rundir.pid_alive
) -> dict[str, Any]:
    """One run as the sidebar shows it: the registry entry plus its latest status.

    ``pid_alive`` is a parameter so that callers on another host (or tests) can decide
    what "alive" means.
    """
    directory = Path(str(entry.get("directory", "")))
    status = rundir.read_json(directory / rundir.STATUS_FILE) if directory.parts else None
    pid = int(entry.get("pid") or (status or {}).get("pid") or 0)
    alive = pid_alive(pid)
    summary: dict[str, Any] = {
        "run_id": str(entry["run_id"]),
        "name": str(entry.get("name") or (status or {}).get("name") or entry["run_id"]),
        "notebook": entry.get("notebook"),
        "kernel": entry.get("kernel"),
        "pid": pid,
        "alive": alive,
        "directory": str(directory),
        "started_at": entry.get("started_at"),
        "status": _status_name(status, alive),
    }
    source = status or {}
    for key in _STATUS_FIELDS:
        summary[key] = source.get(key)
    summary["alarms"] = list(source.get("alarms") or [])
    summary["latest_metrics"] = dict(source.get("latest_metrics") or {})
    summary["best_metrics"] = dict(source.get("best_metrics") or {})
    if summary["status"] == INTERRUPTED:
        summary["eta"] = None
    return summary


def list_runs(
    registry_dir: Path, pid_alive: Callable[[int], bool] = rundir.pid_alive
) -> list[dict[str, Any]]:
    """Every run in the registry, newest first."""
    return [run_summary(entry, pid_alive) for entry in rundir.iter_registry(registry_dir)]


def find_run(registry_dir: Path, run_id: str) -> dict[str, Any] | None:
    """The registry entry for ``run_id``, or None for an invalid or unknown id.

    Only ``<registry_dir>/<run_id>.json`` is ever opened, and only after the id has passed
    :func:`ludwig_nb.core.rundir.is_valid_run_id`, so no request can name a path outside
    the registry.
    """
    if not rundir.is_valid_run_id(run_id):
        return None
    entry = rundir.read_json(registry_dir / f"{run_id}.json")
    if entry is None or entry.get("run_id") != run_id or not entry.get("directory"):
        return None
    return entry
