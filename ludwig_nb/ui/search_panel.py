"""The live panel of a hyperparameter search, and its static summary.

``search_html(search, now)`` renders the whole state as HTML with inline SVG (no
JavaScript): a headline ("N of M trials, search done ≈ HH:MM", best so far), the trial
table (state, parameters, last and best metric, epoch, per-trial ETA, GPU), the trials'
learning curves overlaid with the best one highlighted, the best-so-far line, and a
parallel-coordinates view of parameters against the metric. :class:`SearchPanel` shows it
in an ``HTML`` widget refreshed by the kernel's one pump (at most 4 frames a second), with
Stop/Pause/Resume buttons for the search and for a chosen trial; when the search ends the
display is replaced by the same HTML as a plain ``text/html`` bundle, which survives saving.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from ludwig_nb.core.formatting import format_clock, format_duration

__all__ = ["SearchPanel", "search_html", "search_mimebundle", "show_search"]

_W, _H, _PAD = 320, 170, 28
_STATE_COLORS = {
    "completed": "#2ca02c",
    "running": "#1f77b4",
    "paused": "#ff7f0e",
    "pruned": "#999999",
    "failed": "#d62728",
    "stopped": "#8c564b",
    "queued": "#bbbbbb",
}
_BEST = "#d62728"


def _fmt(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _scale(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _svg_frame(title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'style="font:10px sans-serif;background:#fff">'
        f'<text x="{_PAD}" y="12">{html.escape(title)}</text>{body}</svg>'
    )


def curves_svg(records: Sequence[Any], best: int | None, metric: str) -> str:
    """Every trial's metric per evaluation on shared axes.

    The best trial drawn red and thick, pruned ones grey and dashed.
    """
    points = [(r, r.curve) for r in records if r.curve]
    if not points:
        return _svg_frame(
            f"{metric} per evaluation", '<text x="40" y="90">no evaluation yet</text>'
        )
    xs = [x for _, c in points for x, _ in c]
    ys = [y for _, c in points for _, y in c if math.isfinite(y)]
    x0, x1 = _scale(xs)
    y0, y1 = _scale(ys)

    def at(x: float, y: float) -> str:
        px = _PAD + (x - x0) / (x1 - x0) * (_W - 2 * _PAD)
        py = _H - _PAD - (y - y0) / (y1 - y0) * (_H - 2 * _PAD)
        return f"{px:.1f},{py:.1f}"

    lines = []
    ordered = sorted(points, key=lambda p: p[0].number == best)  # the best drawn last, on top
    for record, curve in ordered:
        is_best = record.number == best
        color = _BEST if is_best else _STATE_COLORS.get(record.state, "#1f77b4")
        dash = ' stroke-dasharray="3,2"' if record.state == "pruned" else ""
        width = 2.5 if is_best else 1
        path = " ".join(at(x, y) for x, y in curve)
        lines.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="{width}"{dash} '
            f'points="{path}"><title>trial {record.number}</title></polyline>'
        )
    axes = (
        f'<text x="2" y="{_PAD + 4}">{y1:.3g}</text>'
        f'<text x="2" y="{_H - _PAD}">{y0:.3g}</text>'
        f'<text x="{_W - 4}" y="{_H - 8}" text-anchor="end">evaluation {x1:.0f}</text>'
    )
    return _svg_frame(f"{metric} per evaluation (best in red)", axes + "".join(lines))


def best_so_far_svg(records: Sequence[Any], goal: str) -> str:
    """The best metric after each finished trial, as a step line."""
    done = [r for r in records if r.state == "completed" and r.metric is not None]
    if not done:
        return _svg_frame("best so far", '<text x="40" y="90">no completed trial yet</text>')
    done.sort(key=lambda r: r.ended or 0.0)
    best: list[float] = []
    for record in done:
        value = float(record.metric)
        if not best:
            best.append(value)
        else:
            best.append(min(best[-1], value) if goal == "minimize" else max(best[-1], value))
    xs = list(range(1, len(best) + 1))
    x0, x1 = _scale(xs)
    y0, y1 = _scale(best + [float(r.metric) for r in done])

    def at(x: float, y: float) -> tuple[float, float]:
        return (
            _PAD + (x - x0) / (x1 - x0) * (_W - 2 * _PAD),
            _H - _PAD - (y - y0) / (y1 - y0) * (_H - 2 * _PAD),
        )

    steps = []
    for i, (x, y) in enumerate(zip(xs, best, strict=True)):
        px, py = at(x, y)
        if i:
            steps.append(f"{px:.1f},{at(x, best[i - 1])[1]:.1f}")
        steps.append(f"{px:.1f},{py:.1f}")
    centres = [at(i + 1, float(r.metric)) for i, r in enumerate(done)]
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="#1f77b4"/>' for x, y in centres)
    axes = (
        f'<text x="2" y="{_PAD + 4}">{y1:.3g}</text><text x="2" y="{_H - _PAD}">{y0:.3g}</text>'
        f'<text x="{_W - 4}" y="{_H - 8}" text-anchor="end">completed trials</text>'
    )
    line = f'<polyline fill="none" stroke="{_BEST}" stroke-width="2" points="{" ".join(steps)}"/>'
    return _svg_frame("best so far", axes + dots + line)


def parallel_svg(records: Sequence[Any], parameters: Sequence[str], best: int | None) -> str:
    """Parallel coordinates: one axis per parameter plus the metric, one line per trial."""
    rows = [r for r in records if r.metric is not None]
    axes = [*parameters, "metric"]
    if not rows or not parameters:
        return _svg_frame(
            "parameters vs metric", '<text x="40" y="90">no trial with a metric yet</text>'
        )
    width = _W + 80 * max(0, len(axes) - 3)

    def coord(record: Any, axis: str) -> float | str | None:
        value = record.metric if axis == "metric" else record.params.get(axis)
        return (
            value
            if isinstance(value, int | float) and not isinstance(value, bool)
            else (None if value is None else str(value))
        )

    positions: dict[str, Callable[[object], float]] = {}

    def numeric(lo: float, hi: float, log: bool) -> Callable[[Any], float]:
        return lambda v: ((math.log10(v) if log else v) - lo) / (hi - lo)

    def labelled(labels: list[str]) -> Callable[[object], float]:
        return lambda v: (labels.index(str(v)) + 0.5) / len(labels)

    for axis in axes:
        values = [coord(r, axis) for r in rows]
        numbers = [float(v) for v in values if isinstance(v, int | float)]
        if numbers and len(numbers) == len(values):
            log = axis != "metric" and min(numbers) > 0 and max(numbers) / min(numbers) > 50
            mapped = [math.log10(v) for v in numbers] if log else numbers
            lo, hi = _scale(mapped)
            positions[axis] = numeric(lo, hi, log)
        else:
            labels = sorted({str(v) for v in values})
            positions[axis] = labelled(labels)
    pad = 56  # room for the axis labels
    step = (width - 2 * pad) / max(1, len(axes) - 1)
    parts = []
    for i, axis in enumerate(axes):
        x = pad + i * step
        parts.append(
            f'<line x1="{x:.1f}" y1="{_PAD}" x2="{x:.1f}" y2="{_H - _PAD}" stroke="#ccc"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{_H - 10}" text-anchor="middle">{html.escape(axis[-22:])}</text>'
        )
    for record in sorted(rows, key=lambda r: r.number == best):
        pts = []
        for i, axis in enumerate(axes):
            value = coord(record, axis)
            frac = positions[axis](value)
            pts.append(f"{pad + i * step:.1f},{_H - _PAD - frac * (_H - 2 * _PAD):.1f}")
        color = _BEST if record.number == best else _STATE_COLORS.get(record.state, "#1f77b4")
        thick = 2.5 if record.number == best else 1
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="{thick}" '
            f'points="{" ".join(pts)}"><title>trial {record.number}</title></polyline>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_H}" '
        f'style="font:10px sans-serif;background:#fff"><text x="{_PAD}" y="12">'
        f"parameters vs metric</text>{''.join(parts)}</svg>"
    )


def _trial_eta(record: Any, now: float) -> str:
    run = getattr(record, "run", None)
    if record.state not in ("running", "paused") or run is None:
        return ""
    estimate = run.eta(now)
    remaining = getattr(estimate, "remaining_s", None)
    return format_duration(remaining) if remaining is not None else "…"


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
            f'<td style="color:{_STATE_COLORS.get(state, "#000")}">{state}</td>{params}'
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
