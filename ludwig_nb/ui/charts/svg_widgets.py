"""Live charts drawn server-side: SVG inside a core ``ipywidgets.HTML`` (no custom widget).

:class:`SvgCurveChart` replaces the bqplot curves where custom widgets do not render (Colab
without its CDN widget manager), with :class:`~ludwig_nb.ui.charts.curve_chart.CurveChart`'s
interface (``figure``, ``writes``, ``scale_writes``); :class:`SvgTimeline` is the
``%gpu_watch`` timeline everywhere (``figure``, ``writes``). Neither writes a trait itself:
they return the writes the view applies in its one batch per frame.

A redraw sends the whole SVG (a few kilobytes: curves are already downsampled), so each
chart redraws at most once per ``min_interval`` seconds of its ``clock`` and only when
its data changed; the static summary at the end of a run has the full-resolution picture.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from ludwig_nb.ui.charts.curves import Curve
from ludwig_nb.ui.charts.gpu_timeline import PERCENT_LINES, TEMPERATURE_LINES, timeline_svg
from ludwig_nb.ui.charts.svg import svg_line_chart

__all__ = ["SvgCurveChart", "SvgTimeline"]

Writes = dict[Any, dict[str, Any]]


#: the x axis label per x mode (as ui/charts.py's X_LABELS, without importing bqplot)
_X_LABELS = {"step": "step", "epoch": "epoch", "time": "elapsed (s)"}


def _wrap(svg: str) -> str:
    return f'<div class="lnb-svg-chart">{svg}</div>'


class SvgCurveChart:
    """Named curves on shared axes, linear or log y, as an SVG in an ``HTML`` widget.

    ``clock``: monotonic seconds; ``min_interval``: the least seconds between redraws.

    Args:
        title: The chart's title.
        y_label: The y axis label.
        x_label: The x axis label.
    """

    def __init__(
        self,
        title: str,
        y_label: str,
        x_label: str = "step",
        *,
        clock: Callable[[], float] = time.monotonic,
        min_interval: float = 1.0,
    ) -> None:
        self.title = title
        self.y_label = y_label
        self.x_label = x_label
        self.is_log = False
        self._clock = clock
        self._min_interval = min_interval
        self._drawn_key: Any = None
        self._drawn_at: float | None = None
        self._y_bounds: tuple[float | None, float | None] = (None, None)
        self.figure = widgets.HTML(
            _wrap(svg_line_chart({}, title=title, x_label=x_label, y_label=y_label)),
            layout=widgets.Layout(width="50%", min_width="280px"),
        )
        self.figure.add_class("lnb-chart")

    @property
    def widget(self) -> widgets.HTML:
        """The widget to place in a layout (as ``CurveChart.widget``)."""
        return self.figure

    def scale_writes(self, log: bool) -> Writes:
        """Remember the y scale; the next :meth:`writes` redraws with it."""
        self.is_log = log
        return {}

    def writes(
        self,
        curves: Mapping[str, Curve],
        title: str | None = None,
        x_mode: str | None = None,
        *,
        y_label: str | None = None,
        y_bounds: tuple[float | None, float | None] = (None, None),
    ) -> Writes:
        """The ``value`` write that redraws the chart, or nothing (unchanged, or too soon).

        ``x_mode``: "step", "epoch" or "time" (the x axis' label follows it); ``y_label`` and
        ``y_bounds`` as :meth:`CurveChart.writes` (the title names the metric here).
        """
        if title is not None:
            self.title = title
        if y_label is not None:
            self.y_label = y_label
        self._y_bounds = y_bounds
        if x_mode is not None:
            self.x_label = _X_LABELS.get(x_mode, x_mode)
        key = (
            self.title,
            self.y_label,
            self.is_log,
            self.x_label,
            tuple(
                (name, len(xs), xs[-1] if xs else None, ys[-1] if ys else None)
                for name, (xs, ys) in curves.items()
            ),
        )
        if key == self._drawn_key:
            return {}
        now = self._clock()
        scale_changed = self._drawn_key is not None and self._drawn_key[:4] != key[:4]
        recent = self._drawn_at is not None and now - self._drawn_at < self._min_interval
        if recent and not scale_changed:
            return {}
        self._drawn_key, self._drawn_at = key, now
        svg = svg_line_chart(
            curves,
            title=self.title,
            x_label=self.x_label,
            y_label=self.y_label,
            log=self.is_log,
            y_bounds=self._y_bounds,
        )
        return {self.figure: {"value": _wrap(svg)}}


class SvgTimeline:
    """One GPU's recent history: the ``%gpu_watch`` timeline (``gpu_timeline.timeline_svg``).

    Percentages and °C in two panels over the last minutes, the slowdown threshold labelled;
    an SVG in a core ``HTML`` widget, so it renders wherever widgets do (Colab included). It
    redraws at most once per ``min_interval`` seconds of ``clock`` and only when a new sample
    came.

    Args:
        index: The GPU's index.
        history: Seconds of history shown at most.
        clock: Monotonic seconds (redraw throttling).
        min_interval: The least seconds between two redraws.
    """

    def __init__(
        self,
        index: int,
        history: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        min_interval: float = 1.0,
    ) -> None:
        self.index = index
        self.history = history
        self._clock = clock
        self._min_interval = min_interval
        self._drawn_at: float | None = None
        self._drawn_key: Any = None
        self.figure = widgets.HTML(
            _wrap(timeline_svg({}, title=f"GPU {index}", history=history)),
            layout=widgets.Layout(width="auto", min_width="440px"),
        )
        self.figure.add_class("lnb-gpu-timeline")

    def writes(self, sampler: Any, gpu: Any, now: float, history: float) -> Writes:
        """The redraw for the sampler's history up to ``now`` (seconds), or nothing."""
        key = (gpu.time, gpu.temperature_slowdown, history)
        moment = self._clock()
        recent = self._drawn_at is not None and moment - self._drawn_at < self._min_interval
        if key == self._drawn_key or recent:
            return {}
        since = now - history
        series: dict[str, tuple[list[float], list[float]]] = {}
        for metric, *_ in (*PERCENT_LINES, *TEMPERATURE_LINES):
            times, values = sampler.history_columns(metric, gpu.index, since=since)
            if times:
                series[metric] = ([t - now for t in times], list(values))
        if not series:
            return {}
        self._drawn_key, self._drawn_at = key, moment
        title = f"GPU {self.index}" + (f" · {gpu.name}" if gpu.name else "")
        svg = timeline_svg(series, title=title, history=history, slowdown=gpu.temperature_slowdown)
        return {self.figure: {"value": _wrap(svg)}}
