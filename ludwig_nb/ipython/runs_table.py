"""The ``%ludwig_runs`` table.

This kernel's runs first, then other live runs, grouped by notebook, in a stable order; finished
runs of other processes only with ``--all``.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

from ludwig_nb.core.formatting import format_duration
from ludwig_nb.core.state import FINAL_STATUSES
from ludwig_nb.store import registry, rundir

__all__ = ["collect_rows", "runs_table_html"]

_COLUMNS = ("name", "notebook", "state", "progress", "best metric", "duration", "directory")
#: which runs to list: this kernel's and live ones (default), live only, or every run
FILTERS = ("default", "live", "all")


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


def _row(state: dict[str, Any], directory: str, now: float, notebook: str = "") -> dict[str, str]:
    total = int(state.get("total_steps") or 0)
    step = int(state.get("step") or 0)
    progress = f"{step}/{total} ({100 * step / total:.0f}%)" if total else f"{step}"
    return {
        "name": str(state.get("name", "")),
        "notebook": notebook,
        "state": str(state.get("status", "")),
        "progress": progress,
        "best metric": _best_metric(state),
        "duration": _duration(state, now),
        "directory": directory,
    }


def _others(registry_dir: Path, seen: set[str], now: float) -> list[tuple[Any, ...]]:
    """``(live rank, notebook, started_at, run id, row)`` for runs of other processes."""
    out = []
    for entry in registry.iter_registry(registry_dir):
        if entry["run_id"] in seen:
            continue
        directory = str(entry.get("directory", ""))
        state = rundir.read_json(Path(directory) / rundir.STATUS_FILE) or dict(entry)
        alive = registry.pid_alive(int(entry.get("pid") or 0))
        if state.get("status") not in FINAL_STATUSES and not alive:
            state["status"] = "interrupted"
        state.setdefault("name", entry.get("name", ""))
        notebook = str(
            entry.get("notebook") or (f"kernel {entry['kernel']}" if entry.get("kernel") else "")
        )
        live = alive and state.get("status") not in FINAL_STATUSES
        row = _row(state, directory, now, notebook)
        out.append(
            (0 if live else 1, notebook, float(entry.get("started_at") or 0), entry["run_id"], row)
        )
    return out


def collect_rows(
    registry: Path | None = None, now: float | None = None, which: str = "default"
) -> list[dict[str, str]]:
    """This kernel's runs first (newest first), then other processes' runs.

    Live ones first, grouped by notebook, by start time. ``which``: ``"default"`` (this kernel's and
    live runs), ``"live"`` (live runs only) or ``"all"`` (finished ones of other processes too).
    Raises ``ValueError`` for another ``which``.
    """
    from ludwig_nb.runs import live
    from ludwig_nb.runs.api import default_registry_dir

    if which not in FILTERS:
        raise ValueError(f"which must be one of {', '.join(FILTERS)}, not {which!r}")
    now = time.time() if now is None else now
    rows, seen = [], set()
    for run in reversed(live.all_runs()):
        seen.add(run.id)
        if which == "live" and not run.is_active:
            continue
        rows.append(_row(run.state.to_dict(), str(run.directory), now, "this kernel"))
    others = sorted(_others(registry or default_registry_dir(), seen, now))
    rows.extend(o[-1] for o in others if which == "all" or o[0] == 0)
    return rows


def runs_table_html(registry: Path | None = None, which: str = "default") -> str:
    """The ``%ludwig_runs`` table as HTML; ``which`` as in :func:`collect_rows`.

    Raises:
        ValueError: ``which`` is not one of :data:`FILTERS`.
    """
    rows = collect_rows(registry, which=which)
    if not rows:
        hint = "" if which == "all" else " (<code>%ludwig_runs --all</code> lists finished ones)"
        return f"<p>No ludwig_nb runs to show{hint}.</p>"
    head = "".join(f"<th>{c}</th>" for c in _COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(row[c])}</td>" for c in _COLUMNS) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
