"""A search's charts as inline SVG (no JavaScript): trials' curves, best so far, parameters.

Pure string building over the search's trial records (``number``, ``state``, ``params``,
``curve``, ``metric``): :func:`curves_svg` overlays every trial's curve of the hyperopt
metric with the best one in red, :func:`best_so_far_svg` steps through the completed trials,
:func:`parallel_svg` draws parameters against the metric in parallel coordinates.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["STATE_COLORS", "best_so_far_svg", "curves_svg", "parallel_svg"]

_W, _H, _PAD = 320, 170, 28
#: a trial's state -> its colour (the panel's table uses the same)
STATE_COLORS = {
    "completed": "#2ca02c",
    "running": "#1f77b4",
    "paused": "#ff7f0e",
    "pruned": "#999999",
    "failed": "#d62728",
    "stopped": "#8c564b",
    "queued": "#bbbbbb",
}
_BEST = "#d62728"


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
        color = _BEST if is_best else STATE_COLORS.get(record.state, "#1f77b4")
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
        color = _BEST if record.number == best else STATE_COLORS.get(record.state, "#1f77b4")
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
