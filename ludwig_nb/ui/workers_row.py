"""The dashboard's workers row: one cell per rank of a distributed run (engine: ray).

Each cell shows the rank, its host, its device (and the run-wide GPU number the gauges
use), the steps it has done and its recent steps/s; a rank that has not reported for a
while is greyed with its silence in seconds, a throttled one shows its idle time. The row
reads ``RunState.workers`` (``WorkersReported`` events, sent by the Ray driver about once a
second); it is empty, and takes no room, for a single-process run.

:func:`workers_row_html` is pure; :class:`WorkersRow` wraps it in one ``ipywidgets.HTML``
and returns writes only when the text changed (the dashboard applies them in its batch).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["STALE_S", "WorkersRow", "workers_row_html"]

#: seconds without a report after which a rank's cell is greyed
STALE_S = 5.0

_CELL = (
    "display:inline-block;margin:0 6px 2px 0;padding:1px 6px;border:1px solid #ddd;"
    "border-radius:3px;font-size:90%;color:{color}"
)


def _rate(value: Any) -> str:
    if value is None:
        return "– steps/s"
    rate = float(value)
    return f"{rate:.1f} steps/s" if rate < 100 else f"{rate:.0f} steps/s"


def _cell(worker: Mapping[str, Any]) -> str:
    device = str(worker.get("device") or "?")
    if worker.get("gpu") is not None:
        device += f" (GPU {worker['gpu']})"
    host = html.escape(str(worker.get("host") or "?"))
    steps = f"{int(worker.get('steps') or 0):,} steps"
    rank = f"<b>rank {int(worker.get('rank', 0))}</b>"
    parts = [rank, host, html.escape(device), steps, _rate(worker.get("steps_per_s"))]
    idle = float(worker.get("idle_s") or 0.0)
    if idle > 0:
        parts.append(f"idle {idle:.1f} s")
    age = float(worker.get("age_s") or 0.0)
    stale = age >= STALE_S
    if stale:
        parts.append(f"silent {age:.0f} s")
    color = "#9e9e9e" if stale else "inherit"
    return (
        f'<span class="lnb-worker" style="{_CELL.format(color=color)}">{" · ".join(parts)}</span>'
    )


def workers_row_html(workers: Iterable[Mapping[str, Any]]) -> str:
    """The row's HTML ("" without workers: a single-process run)."""
    cells = [_cell(w) for w in sorted(workers, key=lambda w: int(w.get("rank", 0)))]
    if not cells:
        return ""
    return f'<div><span style="color:#666;margin-right:6px">workers</span>{"".join(cells)}</div>'


class WorkersRow:
    """The row as a widget; ``writes(workers)`` -> ``{widget: {"value": html}}`` or ``{}``."""

    def __init__(self) -> None:
        import ipywidgets as widgets

        self.widget = widgets.HTML("")
        self.widget.add_class("lnb-workers")
        self._last = ""

    def writes(self, workers: Iterable[Mapping[str, object]]) -> dict[object, dict[str, object]]:
        """The trait writes for ``workers`` (``RunState.workers``), only when changed."""
        text = workers_row_html(workers)
        if text == self._last:
            return {}
        self._last = text
        return {self.widget: {"value": text}}
