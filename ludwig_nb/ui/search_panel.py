"""The live panel of a hyperparameter search, and its static summary.

``search_html(search, now)`` renders the whole state as HTML with inline SVG (no
JavaScript): a headline ("N of M trials, search done ≈ HH:MM", best so far), the trial
table (state, parameters, last and best metric, epoch, per-trial ETA, GPU), and the chart
layer's three views (ui/charts/search.py): the trials' learning curves overlaid with the
best one highlighted, the best-so-far line, and a parallel-coordinates view of parameters
against the metric. :class:`SearchPanel` shows it
in an ``HTML`` widget refreshed by the kernel's one pump (at most 4 frames a second), with
Stop/Pause/Resume buttons for the search and for a chosen trial; when the search ends the
display is replaced by the same HTML as a plain ``text/html`` bundle, which survives saving.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ludwig_nb.core.formatting import format_clock, format_duration
from ludwig_nb.ui.charts.search import STATE_COLORS, best_so_far_svg, curves_svg, parallel_svg

if TYPE_CHECKING:
    from ludwig_nb.runs.handle import RunHandle

__all__ = ["SearchPanel", "search_html", "search_mimebundle", "show_search"]


def _fmt(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _trial_eta(record: Any, now: float) -> str:
    """The running trial's own ETA (its run's, read as every view reads a run)."""
    run: RunHandle | None = getattr(record, "run", None)
    if record.state not in ("running", "paused") or run is None:
        return ""
    estimate = run.eta_reading(now).estimate
    return format_duration(estimate.remaining_s) if estimate is not None else "…"


def _gpu(record: object) -> str:
    """Where the trial trains.

    ``GPU index (share)`` when the search placed it on a share of a GPU, the GPU of its run
    otherwise, blank on the CPU.
    """
    placed = getattr(record, "gpu", None)
    if placed is not None:
        return f"{placed[0]} ({placed[1]:g})"
    run = getattr(record, "run", None)
    index = getattr(run, "device_index", None) if run is not None else None
    return "" if index is None else str(index)


def search_html(search: Any, now: float | None = None) -> str:
    """The search's state as HTML (headline, table, three SVG views). ``now``: wall-clock s."""
    now = time.time() if now is None else now
    records = search.records()
    # one reading of each trial's state for the headline and the table: the records are live,
    # and a trial that starts between two readings showed "1 queued" above two running rows
    states = [search.state_of(record) for record in records]
    counts = {s: states.count(s) for s in search.counts()}
    finished = sum(counts[s] for s in ("completed", "pruned", "failed", "stopped"))
    best_row = search.best
    best = int(best_row["trial"]) if best_row is not None else None
    metric = ".".join(search.metric_path[1:])
    head = [f"<b>{html.escape(search.name)}</b>: {finished} of {search.total} trials"]
    remaining = search.remaining_s(now)
    if search.is_done:
        head.append("search done")
    elif search.is_paused:
        head.append("paused")
    elif remaining is not None:
        head.append(f"search done ≈ {format_clock(now + remaining, now)}")
    else:
        head.append("search done ≈ after the first trial")
    if best_row is not None:
        head.append(f"best {html.escape(metric)} {_fmt(float(best_row['metric']))} (trial {best})")
    head.append(html.escape(", ".join(f"{n} {s}" for s, n in counts.items() if n)))
    parameters = list(search.section["parameters"])
    cells = "".join(f"<th>{html.escape(p)}</th>" for p in parameters)
    table = [
        '<table cellpadding="2" style="border-collapse:collapse;font-size:12px">'
        f"<tr><th>trial</th><th>state</th>{cells}<th>last</th><th>best</th>"
        "<th>epoch</th><th>ETA</th><th>GPU</th><th>time</th></tr>"
    ]
    for record, state in zip(records, states, strict=True):
        style = ' style="color:#999"' if state == "pruned" else ""
        style = ' style="font-weight:bold"' if record.number == best else style
        params = "".join(f"<td>{_fmt(record.params.get(p))}</td>" for p in parameters)
        duration = record.duration_s
        table.append(
            f"<tr{style}><td>{record.number}</td>"
            f'<td style="color:{STATE_COLORS.get(state, "#000")}">{state}</td>{params}'
            f"<td>{_fmt(record.last)}</td><td>{_fmt(record.metric)}</td><td>{record.epoch}</td>"
            f"<td>{_trial_eta(record, now)}</td><td>{_gpu(record)}</td>"
            f"<td>{format_duration(duration) if duration is not None else ''}</td></tr>"
        )
    table.append("</table>")
    error = (
        f'<div style="color:#d62728">search failed: {html.escape(str(search.error))}</div>'
        if search.error is not None
        else ""
    )
    views = (
        '<div style="display:flex;flex-wrap:wrap;gap:8px">'
        + curves_svg(records, best, metric)
        + best_so_far_svg(records, search.goal)
        + parallel_svg(records, parameters, best)
        + "</div>"
    )
    return (
        '<div class="ludwig-nb-search">'
        f"<div>{' · '.join(head)}</div>{error}{''.join(table)}{views}</div>"
    )


def search_mimebundle(search: Any, now: float | None = None) -> dict[str, str]:
    """The static summary: text/html plus a one-line text/plain."""
    counts = search.counts()
    text = f"ludwig_nb search {search.name}: " + ", ".join(
        f"{n} {s}" for s, n in counts.items() if n
    )
    return {"text/plain": text, "text/html": search_html(search, now)}


class SearchPanel:
    """The live widget: an HTML view plus controls. A pump view (``refresh``/``closed``).

    Args:
        search: The search shown and steered.
        clock: Wall-clock seconds for the times shown.
    """

    def __init__(self, search: Any, clock: Callable[[], float] = time.time) -> None:
        import ipywidgets as widgets

        self.search = search
        self._clock = clock
        self.closed = False
        self._final: list[Callable[[SearchPanel], None]] = []
        self.view = widgets.HTML(value=search_html(search, clock()))
        self.trial_picker = widgets.Dropdown(
            options=[], description="trial", layout={"width": "160px"}
        )
        buttons = {
            "stop_search": ("Stop search", lambda _: search.stop("user")),
            "pause_search": ("Pause search", lambda _: search.pause("user")),
            "resume_search": ("Resume search", lambda _: search.resume()),
            "stop_trial": ("Stop trial", lambda _: self._on_trial("stop")),
            "pause_trial": ("Pause trial", lambda _: self._on_trial("pause")),
            "resume_trial": ("Resume trial", lambda _: self._on_trial("resume")),
        }
        self.buttons = {}
        for key, (label, handler) in buttons.items():
            button = widgets.Button(description=label, layout={"width": "auto"})
            button.on_click(handler)
            self.buttons[key] = button
        controls = widgets.HBox(
            [
                self.buttons["stop_search"],
                self.buttons["pause_search"],
                self.buttons["resume_search"],
                self.trial_picker,
                self.buttons["stop_trial"],
                self.buttons["pause_trial"],
                self.buttons["resume_trial"],
            ]
        )
        self.widget = widgets.VBox([controls, self.view])

    def on_final(self, callback: Callable[[SearchPanel], None]) -> None:
        """Call ``callback(panel)`` once the search has ended and the panel froze."""
        self._final.append(callback)

    def _on_trial(self, action: str) -> None:
        number = self.trial_picker.value
        if number is None:
            return
        record = next((r for r in self.search.records() if r.number == number), None)
        if record is None or record.run is None:
            return
        getattr(record.run, action)()

    def refresh(self, now: float) -> None:
        """Write what changed since the last frame (``now``: the pump's monotonic s, unused)."""
        del now  # the pump's monotonic clock; the panel shows wall-clock times
        wall = self._clock()
        active = [r.number for r in self.search.records() if r.state == "running"]
        with self.widget.hold_sync():
            if list(self.trial_picker.options) != active:
                self.trial_picker.options = active
            self.view.value = search_html(self.search, wall)
        if self.search.is_done:
            self.closed = True
            for callback in self._final:
                callback(self)


def show_search(search: Any, *, fps: float = 4.0, block: bool = False) -> SearchPanel:
    """Display ``search``'s live panel in the current cell (the kernel's shared pump).

    With ``block`` the call pumps on this thread until the search ends, and a kernel
    interrupt stops the search gracefully (a second interrupt gives the cell back).
    """
    from ludwig_nb.ui.show import _display, _publish_final, _widget_bundle, pump_view

    panel = SearchPanel(search)
    handle = _display(_widget_bundle(panel.widget, f"ludwig_nb search: {search.name}"))
    panel.on_final(lambda p: _publish_final(handle, search_mimebundle(p.search)))
    pump_view(panel, fps=fps, block=block, stop=lambda: search.stop("interrupt"))
    return panel
