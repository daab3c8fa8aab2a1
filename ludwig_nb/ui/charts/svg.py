"""Inline SVG line charts for the static summary (no JavaScript, renders on GitHub/nbviewer).

Pure string building: ``svg_line_chart({"train": (xs, ys), ...})`` draws each curve as a
polyline on shared axes with round ticks, grid lines and a legend under the plot. Curves
should already be downsampled (see ``core/downsample.py``); the SVG stays a few kilobytes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

from ludwig_nb.core.ticks import bounded_ticks, log_ticks, nice_ticks, tick_label

__all__ = ["CURVE_COLORS", "FONT_SIZE", "HEIGHT", "WIDTH", "svg_line_chart"]

#: curve name -> stroke colour (train blue, validation orange, test green)
CURVE_COLORS = {
    "train": "#1f77b4",
    "training": "#1f77b4",
    "validation": "#ff7f0e",
    "test": "#2ca02c",
}
_FALLBACK_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _finite_points(
    xs: Sequence[float], ys: Sequence[float], log: bool
) -> list[tuple[float, float]]:
    points = []
    for x, y in zip(xs, ys, strict=False):
        if not (math.isfinite(x) and math.isfinite(y)) or (log and y <= 0):
            continue
        points.append((float(x), float(y)))
    return points


def _y_axis(
    ys: list[float], log: bool, bounds: tuple[float | None, float | None]
) -> tuple[list[float], float, float]:
    if log:
        return log_ticks(min(ys), max(ys), max_ticks=5)
    return bounded_ticks(min(ys), max(ys), bounds, max_ticks=5)


#: the chart's size in px, about the live dashboard's charts (a summary replaces them), two
#: side by side in a notebook's output
WIDTH, HEIGHT = 440, 270
#: tick labels, axis labels and legend (px); the title is one px larger
FONT_SIZE = 12


def svg_line_chart(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "",
    x_label: str = "step",
    y_label: str = "",
    width: int = WIDTH,
    height: int = HEIGHT,
    log: bool = False,
    y_bounds: tuple[float | None, float | None] = (None, None),
) -> str:
    """An ``<svg>`` element drawing ``curves`` ({name: (xs, ys)}) on real axes.

    Round ticks and grid lines on both, the x axis from 0, axis labels (``y_label``: what the
    values are, the metric's name; written up the left side), and the legend in a row under
    the plot (never on the data). ``width`` and ``height`` in px. ``log`` = log10 y axis;
    ``y_bounds``: the least and most the values can be (a metric's range: r2's axis stops at
    1). The raw ``train`` curve is drawn faint under the others. Returns an SVG saying
    "no data" when nothing is drawable.
    """
    series = {name: _finite_points(xs, ys, log) for name, (xs, ys) in curves.items()}
    series = {name: pts for name, pts in series.items() if pts}
    left, right, top = 72, 18, 26
    legend_h = 18 * ((len(series) + 2) // 3) if series else 0
    bottom = 48 + legend_h
    plot_w, plot_h = width - left - right, height - top - bottom
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT_SIZE}" '
        'class="lnb-svg-chart">'
        f'<text class="lnb-title" x="{left}" y="16" font-size="{FONT_SIZE + 1}" '
        f'font-weight="bold">{html.escape(title)}</text>'
    )
    if y_label:
        middle = top + plot_h / 2
        head += (
            f'<text class="lnb-y-label" x="13" y="{middle:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 13 {middle:.1f})">'
            f"{html.escape(y_label)}{' (log)' if log else ''}</text>"
        )
    if not series:
        return head + f'<text x="{left + 10}" y="{top + plot_h / 2}">no data</text></svg>'
    all_x = [p[0] for pts in series.values() for p in pts]
    all_y = [p[1] for pts in series.values() for p in pts]
    x_ticks, x0, x1 = nice_ticks(0.0, max([*all_x, 1e-9]), max_ticks=6, outward=False)
    x1 = x1 if x1 > x0 else x0 + 1
    y_ticks, y0, y1 = _y_axis(all_y, log, y_bounds)
    to_y = math.log10 if log else float
    ly0, ly1 = to_y(y0), to_y(y1)
    ly1 = ly1 if ly1 > ly0 else ly0 + 1

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def sy(y: float) -> float:
        return top + plot_h - (to_y(y) - ly0) / (ly1 - ly0) * plot_h

    x_step = x_ticks[1] - x_ticks[0] if len(x_ticks) > 1 else None
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 and not log else None
    parts = [head]
    for y in y_ticks:
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
            'stroke="#eee"/>'
            f'<text class="lnb-tick lnb-y-tick" x="{left - 5}" y="{sy(y) + 4:.1f}" '
            f'text-anchor="end">{tick_label(y, y_step, log=log)}</text>'
        )
    for x in x_ticks:
        anchor = "end" if sx(x) > left + plot_w - 12 else "middle"
        parts.append(
            f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{top + plot_h}" '
            f'y2="{top + plot_h + 3}" stroke="#999"/>'
            f'<text class="lnb-tick lnb-x-tick" x="{sx(x):.1f}" y="{top + plot_h + 16}" '
            f'text-anchor="{anchor}">{tick_label(x, x_step)}</text>'
        )
    parts.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#bbb" class="lnb-plot-area"/>'
        f'<text class="lnb-x-label" x="{left + plot_w / 2}" y="{top + plot_h + 32}" '
        'text-anchor="middle">'
        f"{html.escape(x_label)}{' (log y)' if log and not y_label else ''}</text>"
    )
    for i, (name, pts) in enumerate(series.items()):
        color = CURVE_COLORS.get(
            name.removesuffix(" (smoothed)"), _FALLBACK_COLORS[i % len(_FALLBACK_COLORS)]
        )
        faint = ' stroke-opacity="0.3"' if name == "train" else ""
        if len(pts) == 1:
            x, y = pts[0]
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{color}"/>')
        else:
            coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            parts.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.5"{faint} '
                f'points="{coords}"/>'
            )
        lx = left + (i % 3) * (plot_w / 3)
        ly = top + plot_h + 50 + 18 * (i // 3)
        label = "train (raw)" if name == "train" else name
        fill_opacity = ' fill-opacity="0.3"' if name == "train" else ""
        parts.append(
            f'<g class="lnb-legend-item"><rect x="{lx:.1f}" y="{ly - 7}" width="12" height="3" '
            f'fill="{color}"{fill_opacity}/>'
            f'<text x="{lx + 16:.1f}" y="{ly - 3}">{html.escape(label)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
