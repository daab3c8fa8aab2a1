"""Inline SVG line charts for the static summary (no JavaScript, renders on GitHub/nbviewer).

Pure string building: ``svg_line_chart({"train": (xs, ys), ...})`` draws each curve as a
polyline on shared axes with min/max tick labels and a legend. Curves should already be
downsampled (see ``core/downsample.py``); the SVG stays a few kilobytes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

__all__ = ["CURVE_COLORS", "svg_line_chart"]

#: curve name -> stroke colour (train blue, validation orange, test green)
CURVE_COLORS = {
    "train": "#1f77b4",
    "training": "#1f77b4",
    "validation": "#ff7f0e",
    "test": "#2ca02c",
}
_FALLBACK_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _tick(value: float) -> str:
    return f"{value:.3g}"


def _finite_points(
    xs: Sequence[float], ys: Sequence[float], log: bool
) -> list[tuple[float, float]]:
    points = []
    for x, y in zip(xs, ys, strict=False):
        if not (math.isfinite(x) and math.isfinite(y)) or (log and y <= 0):
            continue
        points.append((float(x), math.log10(y) if log else float(y)))
    return points


def svg_line_chart(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "",
    x_label: str = "step",
    width: int = 360,
    height: int = 200,
    log: bool = False,
) -> str:
    """An ``<svg>`` element drawing ``curves`` ({name: (xs, ys)}); ``log`` = log10 y axis.

    Returns an SVG saying "no data" when no curve has a drawable point.
    """
    series = {name: _finite_points(xs, ys, log) for name, (xs, ys) in curves.items()}
    series = {name: pts for name, pts in series.items() if pts}
    left, right, top, bottom = 48, 10, 20, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">'
        f'<text x="{left}" y="13" font-size="11" font-weight="bold">{html.escape(title)}</text>'
    )
    if not series:
        return head + f'<text x="{left + 10}" y="{top + plot_h / 2}">no data</text></svg>'
    all_x = [p[0] for pts in series.values() for p in pts]
    all_y = [p[1] for pts in series.values() for p in pts]
    x0, x1 = min(all_x), max(all_x)
    y0, y1 = min(all_y), max(all_y)
    x1 = x1 if x1 > x0 else x0 + 1
    if y1 <= y0:
        y0, y1 = y0 - 0.5, y1 + 0.5

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def sy(y: float) -> float:
        return top + plot_h - (y - y0) / (y1 - y0) * plot_h

    def label(y: float) -> str:
        return _tick(10**y if log else y)

    parts = [
        head,
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#ccc"/>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{label(y1)}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end">{label(y0)}</text>',
        f'<text x="{left}" y="{height - 16}">{_tick(x0)}</text>',
        f'<text x="{left + plot_w}" y="{height - 16}" text-anchor="end">{_tick(x1)}</text>',
        f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle">'
        f"{html.escape(x_label)}{' (log y)' if log else ''}</text>",
    ]
    for i, (name, pts) in enumerate(series.items()):
        color = CURVE_COLORS.get(name, _FALLBACK_COLORS[i % len(_FALLBACK_COLORS)])
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        if len(pts) == 1:
            x, y = pts[0]
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{color}"/>')
        else:
            parts.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{coords}"/>'
            )
        legend_x = left + plot_w - 8
        parts.append(
            f'<text x="{legend_x}" y="{top + 12 + 12 * i}" text-anchor="end" fill="{color}">'
            f"{html.escape(name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
