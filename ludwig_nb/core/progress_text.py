"""``DataProgress`` in words, shown before the first step instead of an empty "step 0 / ?".

The dashboard, status.json (``phase_detail``), the sidebar and the CLI all show these.
Pure: one event in, one short line out.
"""

from __future__ import annotations

from ludwig_nb.core.events import DataProgress

__all__ = ["data_progress_text"]


def _table(rows: int | None, columns: int | None) -> str:
    if rows is None:
        return ""
    return f"{rows:,} rows" + (f" × {columns:,} columns" if columns is not None else "")


def data_progress_text(event: DataProgress) -> str:
    """The line for ``event``.

    ``"reading demo:churn"``, ``"demo:churn · 5,000 rows × 21 columns"``,
    ``"feature 2 of 4 (total_day_minutes) · 3,500 rows"``, ``"loading torch"``,
    ``"building the model"``; an unknown stage is shown as its name.
    """
    if event.stage == "reading":
        return f"reading {event.source}".strip()
    if event.stage == "read":
        shape = _table(event.rows, event.columns)
        return " · ".join(part for part in (event.source, shape) if part) or "read the data"
    if event.stage == "preprocessing":
        name = f" ({event.feature})" if event.feature else ""
        rows = f" · {event.rows:,} rows" if event.rows is not None else ""
        return f"feature {event.index} of {event.total}{name}{rows}"
    if event.stage == "loading":
        return f"loading {event.source or 'the engine'}"
    if event.stage == "building":
        return "building the model"
    return event.stage
