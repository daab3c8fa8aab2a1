"""One GPU's recent history for ``%gpu_watch``, as SVG: two small multiples on one time axis.

The top panel holds percentages on a fixed 0-100 % axis (utilisation, memory used, and on
GPUs with GPM the SM and tensor activity), the bottom one the temperature in °C with the
slowdown threshold as a labelled dashed line, so % and °C never share an axis. The time
axis counts back from now in round steps ("-2 min", "-1 min", "now"), and its window grows
with the data up to the history asked for (10 s, 20 s, 30 s, 1 min, 2 min, ...): a few seconds
of data fill the plot instead of making a sliver at its right edge. The legend is a row of
its own above the plots (wrapped when it does not fit), never on the data or the labels.

Pure string building (the view puts the SVG in a core ``HTML`` widget, which renders in
JupyterLab and in Colab alike); gaps in the history (NaN) break the lines, and each line is
thinned to about one point per two pixels, keeping every peak.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping, Sequence

from ludwig_nb.core.downsample import downsample_minmax
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.core.ticks import nice_ticks, tick_label

__all__ = [
    "PERCENT_LINES",
    "TEMPERATURE_LINES",
    "WINDOWS",
    "time_label",
    "time_ticks",
    "timeline_svg",
    "window_for",
]

#: (series name, legend label, colour): the percentage panel
PERCENT_LINES = (
    ("utilization_gpu", "utilisation", "#1f77b4"),
    ("memory_percent", "memory", "#9467bd"),
    ("sm_activity", "SM activity", "#2ca02c"),
    ("tensor_activity", "tensor activity", "#17becf"),
)
#: the temperature panel
TEMPERATURE_LINES = (("temperature", "temperature", "#d62728"),)
_THRESHOLD_COLOR = "#ff7f0e"
#: the windows the time axis grows through (seconds)
WINDOWS = (10, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400)
_TIME_STEPS = (2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400)
_CHAR_W = 6.0  # px per character at font-size 10 (sans-serif), for laying out the legend

Series = Mapping[str, tuple[Sequence[float], Sequence[float]]]


def window_for(span_s: float, history: float) -> float:
    """The time axis' span (s): the smallest round window holding ``span_s``, ≤ ``history``."""
    for window in WINDOWS:
        if window >= span_s - 1e-9:
            return float(min(window, history))
    return float(history)


def time_ticks(window: float, max_ticks: int = 6) -> list[float]:
    """Round times before now (s, ≤ 0, ascending, ending at 0) across ``window`` seconds."""
    step = next((s for s in _TIME_STEPS if window / s <= max_ticks - 1), _TIME_STEPS[-1])
    count = int(window // step + 1e-9)
    return [-float(step * k) for k in range(count, -1, -1)]


def time_label(seconds: float) -> str:
    """``"now"``, ``"-30 s"``, ``"-2 min"``, ``"-1 h 30 min"``."""
    return "now" if abs(seconds) < 1e-9 else f"-{format_duration(-seconds)}"


@dataclasses.dataclass(frozen=True)
class _Panel:
    top: float
    height: float
    low: float
    high: float
    ticks: list[float]
    unit: str

    def y(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.top + self.height - (value - self.low) / span * self.height


def _segments(xs: Sequence[float], ys: Sequence[float]) -> list[tuple[list[float], list[float]]]:
    """The finite runs of a series (a NaN is a gap in the sampling)."""
    out: list[tuple[list[float], list[float]]] = []
    current: tuple[list[float], list[float]] = ([], [])
    for x, y in zip(xs, ys, strict=False):
        if math.isfinite(x) and y is not None and math.isfinite(y):
            current[0].append(float(x))
            current[1].append(float(y))
        elif current[0]:
            out.append(current)
            current = ([], [])
    if current[0]:
        out.append(current)
    return out


def _temperature_panel(series: Series, slowdown: float | None, top: float, height: float) -> _Panel:
    values = [v for _, ys in (series.get(n, ((), ())) for n, *_ in TEMPERATURE_LINES) for v in ys]
    values = [v for v in values if v is not None and math.isfinite(v)]
    if slowdown is not None:
        values.append(slowdown + 2.0)  # the threshold and its label stay inside the panel
    if not values:
        values = [30.0, 90.0]
    ticks, low, high = nice_ticks(min(values), max(values), max_ticks=4)
    return _Panel(top, height, low, high, ticks, " °C")


def _legend(items: list[tuple[str, str, bool]], left: float, right: float, y: float) -> list[str]:
    """Legend items in rows from ``(left, y)``, wrapping before ``right``; (label, colour, dash)."""
    parts, x = [], left
    for label, color, dashed in items:
        width = 18 + _CHAR_W * len(label)
        if x + width > right and x > left:
            x, y = left, y + 14
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        parts.append(
            f'<g class="lnb-legend-item"><line x1="{x:.1f}" x2="{x + 12:.1f}" y1="{y - 3:.1f}" '
            f'y2="{y - 3:.1f}" stroke="{color}" stroke-width="2"{dash}/>'
            f'<text x="{x + 16:.1f}" y="{y:.1f}">{html.escape(label)}</text></g>'
        )
        x += width + 10
    return parts


def _legend_rows(items: list[tuple[str, str, bool]], left: float, right: float) -> int:
    rows, x = 1, left
    for label, *_ in items:
        width = 18 + _CHAR_W * len(label)
        if x + width > right and x > left:
            rows, x = rows + 1, left
        x += width + 10
    return rows


def timeline_svg(
    series: Series,
    *,
    title: str,
    history: float,
    slowdown: float | None = None,
    width: int = 440,
) -> str:
    """The timeline of one GPU as an ``<svg>`` element.

    ``series`` maps a name of :data:`PERCENT_LINES` or :data:`TEMPERATURE_LINES` to ``(seconds
    before now (≤ 0), values)``; ``history``: the most seconds shown; ``slowdown``: °C of the
    dashed threshold line.
    """
    drawn = [(n, lab, c) for n, lab, c in (*PERCENT_LINES, *TEMPERATURE_LINES) if n in series]
    items = [(lab, c, False) for _, lab, c in drawn]
    if slowdown is not None:
        items.append((f"slowdown {slowdown:.0f} °C", _THRESHOLD_COLOR, True))
    left, right = 46.0, 12.0
    rows = _legend_rows(items, left, width - right)
    legend_top = 32.0
    top = legend_top + 14 * (rows - 1) + 10
    panel_h = 70.0
    percent = _Panel(top, panel_h, 0.0, 100.0, [0.0, 25.0, 50.0, 75.0, 100.0], " %")
    temps = _temperature_panel(series, slowdown, top + panel_h + 14, panel_h)
    height = int(temps.top + panel_h + 36)
    span = max((-min(xs) for xs, _ in series.values() if len(xs)), default=0.0)
    window = window_for(span, history)
    plot_w = width - left - right
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10" '
        'class="lnb-svg-chart lnb-gpu-timeline">'
        f'<text class="lnb-title" x="{left}" y="13" font-size="11" font-weight="bold">'
        f"{html.escape(title)}</text>",
        *_legend(items, left, width - right, legend_top),
    ]
    for panel in (percent, temps):
        parts += _panel_frame(panel, left, plot_w)
    for t in time_ticks(window):
        x = left + (t + window) / window * plot_w
        anchor = "end" if t == 0 else "start" if t <= -window + 1e-9 else "middle"
        for panel in (percent, temps):
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{panel.top}" y2="{panel.top + panel.height}" '
                'stroke="#f0f0f0"/>'
            )
        parts.append(
            f'<text class="lnb-tick lnb-x-tick" x="{x:.1f}" y="{temps.top + panel_h + 13}" '
            f'text-anchor="{anchor}">{time_label(t)}</text>'
        )
    if slowdown is not None:
        parts += _threshold(temps, slowdown, left, plot_w)
    in_temps = {n for n, *_ in TEMPERATURE_LINES}
    for name, _, color in drawn:
        panel = temps if name in in_temps else percent
        parts += _lines(series[name], panel, color, left, plot_w, window)
    parts.append("</svg>")
    return "".join(parts)


def _panel_frame(panel: _Panel, left: float, plot_w: float) -> list[str]:
    parts = []
    step = panel.ticks[1] - panel.ticks[0] if len(panel.ticks) > 1 else None
    for value in panel.ticks:
        y = panel.y(value)
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text class="lnb-tick lnb-y-tick" x="{left - 4}" y="{y + 3:.1f}" '
            f'text-anchor="end">{tick_label(value, step)}{panel.unit}</text>'
        )
    parts.append(
        f'<rect class="lnb-plot-area" x="{left}" y="{panel.top}" width="{plot_w}" '
        f'height="{panel.height}" fill="none" stroke="#bbb"/>'
    )
    return parts


def _threshold(panel: _Panel, level: float, left: float, plot_w: float) -> list[str]:
    y = panel.y(level)
    label = f"slowdown {level:.0f} °C"
    # at the left, where the oldest data is, with a white halo so a line under it stays legible
    return [
        f'<line class="lnb-threshold" x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" '
        f'y2="{y:.1f}" stroke="{_THRESHOLD_COLOR}" stroke-dasharray="4 3"/>',
        f'<text class="lnb-threshold-label" x="{left + 4}" y="{y - 3:.1f}" '
        f'fill="{_THRESHOLD_COLOR}" stroke="white" stroke-width="3" paint-order="stroke">'
        f"{html.escape(label)}</text>",
    ]


def _lines(
    data: tuple[Sequence[float], Sequence[float]],
    panel: _Panel,
    color: str,
    left: float,
    plot_w: float,
    window: float,
) -> list[str]:
    xs, ys = data
    inside = [(x, y) for x, y in zip(xs, ys, strict=False) if x >= -window - 1e-9]
    parts = []
    for raw_x, raw_y in _segments([p[0] for p in inside], [p[1] for p in inside]):
        seg_x, seg_y = raw_x, raw_y
        if len(raw_x) > plot_w / 2:
            seg_x, seg_y = downsample_minmax(raw_x, raw_y, max(4, int(plot_w / 2)))
        points = [
            (left + (x + window) / window * plot_w, panel.y(min(max(y, panel.low), panel.high)))
            for x, y in zip(seg_x, seg_y, strict=True)
        ]
        if len(points) == 1:
            ((px, py),) = points
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2" fill="{color}"/>')
            continue
        coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{coords}"/>'
        )
    return parts
