"""bqplot line charts for the live dashboard (loss and validation metric).

:class:`CurveChart` owns one ``bq.Figure`` with a ``bq.Lines`` mark per curve and a
linear and a log y scale. It never writes traits by itself: :meth:`CurveChart.writes`
returns the ``(widget, {trait: value})`` pairs the dashboard applies inside its one batch
per frame, so the pump stays the only writer. Uses only APIs that ipywidgets 7 and 8 and
bqplot 0.12/0.13 share (``bq.Axis(side=...)`` rather than the deprecated ``orientation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bqplot as bq
import ipywidgets as widgets

from ludwig_nb.ui.curves import Curve
from ludwig_nb.ui.svg import CURVE_COLORS

__all__ = ["CurveChart", "Writes"]

#: what a view wants written this frame: widget -> {trait name: value}
Writes = dict[Any, dict[str, Any]]

_EXTRA_COLORS = ("#9467bd", "#8c564b", "#e377c2")


class CurveChart:
    """A figure with named curves that share axes; y on a linear or log scale."""

    def __init__(self, title: str, y_label: str, x_label: str = "step") -> None:
        self.x_scale = bq.LinearScale()
        self.linear = bq.LinearScale()
        self.log = bq.LogScale()
        self.is_log = False
        self.x_axis = bq.Axis(scale=self.x_scale, label=x_label, num_ticks=5)
        self.y_axis = bq.Axis(scale=self.linear, label=y_label, side="left", tick_format=".3g")
        self.lines: dict[str, bq.Lines] = {}
        self.figure = bq.Figure(
            marks=[],
            axes=[self.x_axis, self.y_axis],
            title=title,
            legend_location="top-right",
            fig_margin={"top": 30, "bottom": 35, "left": 55, "right": 10},
            layout=widgets.Layout(width="50%", min_width="280px", height="240px"),
        )
        self._shown: dict[str, tuple[int, float | None, float | None]] = {}

    @property
    def y_scale(self) -> bq.Scale:
        return self.log if self.is_log else self.linear

    def _line(self, name: str) -> tuple[bq.Lines, bool]:
        line = self.lines.get(name)
        if line is not None:
            return line, False
        color = CURVE_COLORS.get(name, _EXTRA_COLORS[len(self.lines) % len(_EXTRA_COLORS)])
        line = bq.Lines(
            x=[],
            y=[],
            scales={"x": self.x_scale, "y": self.y_scale},
            colors=[color],
            labels=[name],
            display_legend=True,
            marker="circle" if name != "train" else None,
            marker_size=12,
        )
        self.lines[name] = line
        return line, True

    def writes(self, curves: Mapping[str, Curve], title: str | None = None) -> Writes:
        """The trait writes that bring the chart to ``curves``; unchanged curves are skipped."""
        out: Writes = {}
        added = False
        for name, (xs, ys) in curves.items():
            key = (len(xs), xs[-1] if xs else None, ys[-1] if ys else None)
            line, new = self._line(name)
            added = added or new
            if not new and self._shown.get(name) == key:
                continue
            self._shown[name] = key
            out[line] = {"x": list(xs), "y": list(ys)}
        if added:
            out.setdefault(self.figure, {})["marks"] = list(self.lines.values())
        if title is not None and title != self.figure.title:
            out.setdefault(self.figure, {})["title"] = title
        return out

    def scale_writes(self, log: bool) -> Writes:
        """Switch the y axis and every line to the log (or linear) scale."""
        if log == self.is_log:
            return {}
        self.is_log = log
        scale = self.y_scale
        out: Writes = {self.y_axis: {"scale": scale}}
        for line in self.lines.values():
            out[line] = {"scales": {"x": self.x_scale, "y": scale}}
        return out
