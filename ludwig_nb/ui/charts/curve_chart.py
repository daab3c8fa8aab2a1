"""bqplot line charts for the live dashboard (loss and validation metric).

:class:`CurveChart` owns one ``bq.Figure`` and an HTML legend above it (outside the plot,
so it never hides data). It never writes traits by itself: :meth:`CurveChart.writes`
returns the ``(widget, {trait: value})`` pairs the dashboard applies inside its one batch
per frame, so the pump stays the only writer.

What a person reads, and how it is kept honest:

* the scales' ranges and the ticks are computed here (``core/ticks.py``): round numbers,
  at most five or six of them, the x axis from 0 to the last step, no label outside the box;
* the log scale is a second set of marks on its own ``LogScale`` with its own axis; the
  toggle only flips ``visible`` (swapping a mark's scale in place left bqplot with a NaN
  domain, piled-up tick labels and no way back);
* the raw training loss is drawn faint under its smoothed curve, and the evaluation
  curves last, so they stay on top.

Uses only APIs that ipywidgets 7 and 8 and bqplot 0.12/0.13 share.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import bqplot as bq
import ipywidgets as widgets

from ludwig_nb.core.ticks import log_ticks, nice_ticks
from ludwig_nb.ui.charts.curves import SMOOTHED, Curve
from ludwig_nb.ui.charts.svg import CURVE_COLORS

__all__ = ["TICK_FORMAT", "X_LABELS", "CurveChart", "Writes"]

#: what a view wants written this frame: widget -> {trait name: value}
Writes = dict[Any, dict[str, Any]]

_EXTRA_COLORS = ("#9467bd", "#8c564b", "#e377c2")
#: one tick format for every axis, set once: round ticks need at most four significant
#: digits, "~" drops trailing zeros, "," groups thousands ("1,000", "0.25", "0.875").
#: (A format rewritten as the range changes was not always picked up by bqplot's view:
#: 0.25-steps were labelled 0.3.)
TICK_FORMAT = ",.4~r"
#: x axis mode -> its label
X_LABELS = {"step": "step", "epoch": "epoch", "time": "elapsed (s)"}


def _color(name: str, index: int) -> str:
    base = name.removesuffix(" (smoothed)")
    return CURVE_COLORS.get(base, _EXTRA_COLORS[index % len(_EXTRA_COLORS)])


def _style(name: str) -> dict[str, object]:
    if name == "train":  # the raw per-step loss: context, not the headline
        return {"opacities": [0.25], "stroke_width": 1, "marker": None}
    if name == SMOOTHED:
        return {"opacities": [1.0], "stroke_width": 2, "marker": None}
    return {"opacities": [1.0], "stroke_width": 2, "marker": "circle", "marker_size": 16}


class _Marks:
    """One line per curve on one (x, y) scale pair, with a y axis of its own."""

    def __init__(self, x_scale: bq.Scale, y_scale: bq.Scale, y_label: str, visible: bool) -> None:
        self.x_scale, self.y_scale = x_scale, y_scale
        self.axis = bq.Axis(
            scale=y_scale,
            label=y_label,
            side="left",
            visible=visible,
            label_offset="42px",
            grid_lines="dashed",
            tick_format=".3~g" if isinstance(y_scale, bq.LogScale) else TICK_FORMAT,
        )
        self.lines: dict[str, bq.Lines] = {}
        self.shown: dict[str, tuple[int, float | None, float | None]] = {}

    def line(self, name: str, visible: bool) -> tuple[bq.Lines, bool]:
        line = self.lines.get(name)
        if line is not None:
            return line, False
        line = bq.Lines(
            x=[],
            y=[],
            scales={"x": self.x_scale, "y": self.y_scale},
            colors=[_color(name, len(self.lines))],
            labels=[name],
            display_legend=False,
            visible=visible,
            **_style(name),
        )
        self.lines[name] = line
        return line, True


class CurveChart:
    """A figure with named curves that share axes; y on a linear or log scale.

    Args:
        title: The figure's title.
        y_label: The y axis label (`` (log)`` is appended on the log scale).
        x_label: The x axis label.
    """

    def __init__(self, title: str, y_label: str, x_label: str = "step") -> None:
        self.x_scale = bq.LinearScale(min=0.0, max=1.0)
        self.linear = bq.LinearScale(min=0.0, max=1.0)
        self.log = bq.LogScale(min=0.1, max=1.0)
        self.is_log = False
        self.x_mode = "step"
        self.x_axis = bq.Axis(
            scale=self.x_scale,
            label=x_label,
            tick_values=[0.0, 1.0],
            grid_lines="none",
            tick_format=TICK_FORMAT,
        )
        self._lin = _Marks(self.x_scale, self.linear, y_label, visible=True)
        self._log = _Marks(self.x_scale, self.log, f"{y_label} (log)", visible=False)
        self.y_axis = self._lin.axis
        self.legend = widgets.HTML("", layout=widgets.Layout(min_height="20px"))
        self.legend.add_class("lnb-legend")
        self.figure = bq.Figure(
            marks=[],
            axes=[self.x_axis, self._lin.axis, self._log.axis],
            title=title,
            fig_margin={"top": 28, "bottom": 40, "left": 62, "right": 28},
            layout=widgets.Layout(width="100%", min_width="280px", height="240px"),
        )
        self.figure.add_class("lnb-chart")
        self.widget = widgets.VBox(
            [self.legend, self.figure], layout=widgets.Layout(width="50%", min_width="300px")
        )
        self._bounds: tuple[object, ...] = ()
        self._names: tuple[str, ...] = ()

    # -- read-only views for tests and callers ------------------------------------------
    @property
    def lines(self) -> dict[str, bq.Lines]:
        """The visible scale's lines by curve name."""
        return (self._log if self.is_log else self._lin).lines

    @property
    def y_scale(self) -> bq.Scale:
        """The y scale in use: log or linear."""
        return self.log if self.is_log else self.linear

    # -- writes ---------------------------------------------------------------------------
    def writes(
        self, curves: Mapping[str, Curve], title: str | None = None, x_mode: str | None = None
    ) -> Writes:
        """The trait writes that bring the chart to ``curves``; unchanged curves are skipped."""
        out: Writes = {}
        if x_mode is not None and x_mode != self.x_mode:
            self.x_mode = x_mode
            self._lin.shown.clear()
            self._log.shown.clear()
            out[self.x_axis] = {"label": X_LABELS.get(x_mode, x_mode)}
        added = self._data_writes(self._lin, curves, not self.is_log, out)
        added = self._data_writes(self._log, _positive(curves), self.is_log, out) or added
        if added:
            marks = list(self._lin.lines.values()) + list(self._log.lines.values())
            out.setdefault(self.figure, {})["marks"] = marks
        _merge_into(out, self._range_writes(curves))
        _merge_into(out, self._legend_writes(curves))
        if title is not None and title != self.figure.title:
            out.setdefault(self.figure, {})["title"] = title
        return out

    def _data_writes(
        self, marks: _Marks, curves: Mapping[str, Curve], visible: bool, out: Writes
    ) -> bool:
        added = False
        for name, (xs, ys) in curves.items():
            line, new = marks.line(name, visible)
            added = added or new
            if not visible:
                continue  # the hidden scale gets its data when it is switched on
            key = (len(xs), xs[-1] if xs else None, ys[-1] if ys else None)
            if not new and marks.shown.get(name) == key:
                continue
            marks.shown[name] = key
            out[line] = {"x": list(xs), "y": list(ys)}
        return added

    def _range_writes(self, curves: Mapping[str, Curve]) -> Writes:
        xs = [x for cx, _ in curves.values() for x in cx if math.isfinite(x)]
        ys = [y for _, cy in curves.values() for y in cy if math.isfinite(y)]
        if not xs or not ys:
            return {}
        x_ticks, x0, x1 = nice_ticks(0.0, max([*xs, 1e-9]), max_ticks=6, outward=False)
        if self.is_log and any(y > 0 for y in ys):
            positive = [y for y in ys if y > 0]
            y_ticks, y0, y1 = log_ticks(min(positive), max(positive))
            scale, axis = self.log, self._log.axis
        else:
            y_ticks, y0, y1 = nice_ticks(min(ys), max(ys), max_ticks=5)
            scale, axis = self.linear, self._lin.axis
        bounds = (x0, x1, y0, y1, tuple(y_ticks), tuple(x_ticks), self.is_log)
        if bounds == self._bounds:
            return {}
        self._bounds = bounds
        return {
            self.x_scale: {"min": float(x0), "max": float(x1)},
            self.x_axis: {"tick_values": list(x_ticks)},
            scale: {"min": float(y0), "max": float(y1)},
            axis: {"tick_values": list(y_ticks)},
        }

    def _legend_writes(self, curves: Mapping[str, Curve]) -> Writes:
        names = tuple(curves)
        if names == self._names:
            return {}
        self._names = names
        return {self.legend: {"value": legend_html(names)}}

    def scale_writes(self, log: bool) -> Writes:
        """Switch to the log (or linear) marks and axis; the data follows on this frame."""
        if log == self.is_log:
            return {}
        self.is_log = log
        out: Writes = {self._lin.axis: {"visible": not log}, self._log.axis: {"visible": log}}
        for marks, visible in ((self._lin, not log), (self._log, log)):
            marks.shown.clear()
            for line in marks.lines.values():
                out[line] = {"visible": visible}
        self.y_axis = self._log.axis if log else self._lin.axis
        self._bounds = ()
        return out


def _positive(curves: Mapping[str, Curve]) -> dict[str, Curve]:
    """What a log axis can draw: points with y > 0."""
    out = {}
    for name, (xs, ys) in curves.items():
        pairs = [(x, y) for x, y in zip(xs, ys, strict=False) if y > 0]
        out[name] = ([p[0] for p in pairs], [p[1] for p in pairs])
    return out


def legend_html(names: Sequence[str]) -> str:
    """Colour swatches and names, one row, above the plot."""
    items = []
    for i, name in enumerate(names):
        color = _color(name, i)
        faint = "opacity:0.35;" if name == "train" else ""
        label = "train (raw)" if name == "train" else name
        items.append(
            f'<span class="lnb-legend-item" style="margin-right:12px;white-space:nowrap">'
            f'<span style="display:inline-block;width:14px;height:3px;background:{color};'
            f'{faint}vertical-align:middle;margin-right:4px"></span>{html.escape(label)}</span>'
        )
    return f'<div style="font-size:11px;padding-left:62px">{"".join(items)}</div>'


def _merge_into(into: Writes, more: Writes) -> None:
    for widget, traits in more.items():
        into.setdefault(widget, {}).update(traits)
