"""The ``%ludwig_runs`` table: runs of this kernel and runs registered on this machine."""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

from ludwig_nb.core import rundir
from ludwig_nb.core.state import FINAL_STATUSES
from ludwig_nb.ui.formatting import format_duration

__all__ = ["collect_rows", "runs_table_html"]

_COLUMNS = ("name", "state", "progress", "best metric", "duration", "directory")


def _best_metric(state: dict[str, Any]) -> str:
    best = state.get("best_metrics") or {}
    validation = best.get("validation") or best.get("training") or {}
    for feature, metrics in validation.items():
        if feature == "combined" or not isinstance(metrics, dict):
            continue
        for metric, value in metrics.items():
            if metric != "loss" and isinstance(value, int | float):
                return f"{feature}.{metric} = {value:.4g}"
    return ""


def _duration(state: dict[str, Any], now: float) -> str:
    start = state.get("started_at")
    if not start:
        return ""
    return format_duration((state.get("finished_at") or now) - start)


def _row(state: dict[str, Any], directory: str, now: float) -> dict[str, str]:
    total = int(state.get("total_steps") or 0)
    step = int(state.get("step") or 0)
    progress = f"{step}/{total} ({100 * step / total:.0f}%)" if total else f"{step}"
    return {
        "name": str(state.get("name", "")),
        "state": str(state.get("status", "")),
        "progress": progress,
        "best metric": _best_metric(state),
        "duration": _duration(state, now),
        "directory": directory,
    }


def collect_rows(registry: Path | None = None, now: float | None = None) -> list[dict[str, str]]:
    """This kernel's runs first (live state), then registered runs of other processes."""
    from ludwig_nb.runs import live
    from ludwig_nb.runs.api import default_registry_dir

    now = time.time() if now is None else now
    rows, seen = [], set()
    for run in reversed(live.all_runs()):
        rows.append(_row(run.state.to_dict(), str(run.directory), now))
        seen.add(run.id)
    for entry in rundir.iter_registry(registry or default_registry_dir()):
        if entry["run_id"] in seen:
            continue
        directory = str(entry.get("directory", ""))
        state = rundir.read_json(Path(directory) / rundir.STATUS_FILE) or dict(entry)
        if state.get("status") not in FINAL_STATUSES and not rundir.pid_alive(
            int(entry.get("pid") or 0)
        ):
            state["status"] = "interrupted"
        state.setdefault("name", entry.get("name", ""))
        rows.append(_row(state, directory, now))
    return rows


def runs_table_html(registry: Path | None = None) -> str:
    rows = collect_rows(registry)
    if not rows:
        return "<p>No ludwig_nb runs yet.</p>"
    head = "".join(f"<th>{c}</th>" for c in _COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(row[c])}</td>" for c in _COLUMNS) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
