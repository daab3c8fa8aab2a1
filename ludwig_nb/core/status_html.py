"""A run's readable snapshot from its ``status.json``: HTML and text, no widgets (pure).

Used where a live widget cannot be trusted to survive: the fallback inside the dashboard's
own display bundle, and the notebook pre-save hook (``server/notebook_fallback.py``) that
replaces a saved dashboard with this snapshot so that a reopened notebook never shows
"Error displaying widget: model not found".
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.baseline import compare_to_baseline, format_comparison
from ludwig_nb.core.early_stop import end_reason
from ludwig_nb.core.metrics_text import metrics_text_table
from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_text import pause_text

__all__ = ["FALLBACK_CLASS", "METADATA_KEY", "snapshot_bundle", "state_from_status"]

#: display metadata key naming the run a dashboard output belongs to
METADATA_KEY = "ludwig_nb"
FALLBACK_CLASS = "ludwig-nb-snapshot"
_FIELDS = {f.name for f in dataclasses.fields(RunState)}


def state_from_status(status: Mapping[str, Any]) -> RunState:
    """A ``RunState`` from a ``status.json`` mapping (unknown keys ignored)."""
    kwargs = {k: v for k, v in status.items() if k in _FIELDS}
    kwargs["alarms"] = tuple(kwargs.get("alarms") or ())
    return RunState(**kwargs)


#: what an "interrupted" run (its process gone before it ended) says
INTERRUPTED_TEXT = (
    "its process ended before the run did (the kernel died or was restarted); "
    "the checkpoints it wrote are in the run directory"
)


def _lines(state: RunState, directory: str, early_stop: str) -> list[str]:
    total = f"{state.total_steps:,}" if state.total_steps else "?"
    status = pause_text(state) or state.status
    lines = [f"{state.name or state.run_id}: {status}, step {state.step:,} / {total}"]
    ended = INTERRUPTED_TEXT if state.status == "interrupted" else end_reason(state)
    if ended:
        lines.append(ended)
    elif early_stop and not state.is_final:
        lines.append(early_stop)
    metrics = state.best_metrics or state.latest_metrics
    versus = compare_to_baseline(metrics, state.baseline, state.baseline_predictors)
    lines.extend(format_comparison(c) for c in versus)
    if not state.is_final:
        lines.append(
            f"snapshot taken while the run was live: if its kernel still runs it, "
            f"ludwig_nb.show({_variable(state.name)}) in a cell (the variable holding the "
            "run) shows the live dashboard again; the sidebar and the run directory have its "
            "current state"
        )
    if directory:
        lines.append(f"run directory: {directory}")
    return lines


def _variable(name: str) -> str:
    """The run's name if it can name a variable (``--name`` binds one), else ``run``."""
    return name if name.isidentifier() else "run"


def snapshot_bundle(state: RunState, directory: str = "", early_stop: str = "") -> dict[str, str]:
    """``{"text/plain", "text/html"}`` describing ``state``.

    Status, progress, why it ended, metrics beside the trivial baseline, and where the run directory
    is.

    Args:
        state: The run's state.
        directory: The run directory, named in the snapshot ("" leaves it out).
        early_stop: status.json's ``early_stop.text`` (``"at most 11,000 steps (early
            stopping); likely stops near step 2,600 (not before 1,500)"``), shown while the
            run is live.

    Returns:
        The ``text/plain`` and ``text/html`` of the snapshot.
    """
    lines = _lines(state, directory, early_stop)
    metrics = state.best_metrics or state.latest_metrics
    table = metrics_text_table(metrics, state.baseline, state.baseline_predictors)
    text = "\n".join(lines + ([table] if table else []))
    body = "".join(f"<div>{html.escape(line)}</div>" for line in lines[1:])
    pre = f'<pre style="font-size:85%">{html.escape(table)}</pre>' if table else ""
    markup = (
        f'<div class="{FALLBACK_CLASS}" data-status="{html.escape(state.status)}" '
        'style="border:1px solid #ddd;border-radius:4px;padding:6px 10px">'
        f"<b>{html.escape(lines[0])}</b>{body}{pre}</div>"
    )
    return {"text/plain": text, "text/html": markup}
