"""The static HTML of a run comparison: HTML and inline SVG only, so it survives saving.

Sections: a summary row per run, not-comparable warnings, the config diff (only what
differs; a ``<details>`` toggle shows every path), the metric table (base, runs, delta,
delta %, the better value in bold by each metric's goal), the time and resource table, and
overlaid learning curves with x = step (``<details>`` for epoch and elapsed time).
"""

from __future__ import annotations

import html
import math
from typing import Any

from ludwig_nb.core.formatting import format_bytes, format_duration
from ludwig_nb.runs.compare import Comparison
from ludwig_nb.runs.compare import compare as _compare
from ludwig_nb.ui.charts.svg import svg_line_chart
from ludwig_nb.ui.formatting import format_metric, metric_bounds

__all__ = ["compare", "comparison_html"]

CLASS = "ludwig-nb-compare"


def compare(*sources: object, names: Any = None) -> Comparison:
    """:func:`ludwig_nb.runs.compare.compare`, displayed with this view."""
    return _compare(*sources, names=names)


def _esc(value: object) -> str:
    return html.escape(str(value))


def _value(value: Any, label: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if "bytes" in label:
        return format_bytes(value)
    if label.endswith("(s)"):
        return format_duration(value) if abs(value) >= 1 else f"{value:.3g} s"
    return format_metric(value)


def _delta(value: Any, label: str) -> str:
    if value is None:
        return "—"
    sign = "+" if value > 0 else ("−" if value < 0 else "±")
    if "bytes" in label:
        return sign + format_bytes(abs(value))
    return f"{sign}{abs(value):.4g}"


def _pct(value: Any) -> str:
    if value is None:
        return "—"
    if math.isinf(value):
        return "inf"
    return f"{value:+.1f} %"


def _summary(c: Comparison) -> str:
    rows = "".join(
        f"<tr><td><b>{_esc(n)}</b></td><td>{_esc(r.kind)}</td>"
        f"<td>{_esc(r.facts.get('status') or '—')}</td>"
        f"<td>{_esc(r.hardware or '—')}</td>"
        f"<td>{_esc(format_duration(r.facts['duration_s']) if r.facts.get('duration_s') else '—')}"
        f"</td><td><small>{_esc(r.directory or '')}</small></td></tr>"
        for n, r in zip(c.names, c.records, strict=True)
    )
    return (
        "<table class='lnb-compare-runs'><tr><th>run</th><th>kind</th><th>status</th>"
        f"<th>hardware</th><th>took</th><th>directory</th></tr>{rows}</table>"
    )


def _config_table(paths: dict[str, tuple[object, ...]], names: list[str]) -> str:
    head = "".join(f"<th>{_esc(n)}</th>" for n in names)
    body = "".join(
        f"<tr><td><code>{_esc(p)}</code></td>"
        + "".join(f"<td>{_esc(v)}</td>" for v in values)
        + "</tr>"
        for p, values in paths.items()
    )
    return f"<table class='lnb-config'><tr><th>config path</th>{head}</tr>{body}</table>"


def _config(c: Comparison) -> str:
    diff, everything = c.config_diff, c.config_all
    same = len(everything) - len(diff)
    shown = _config_table(diff, c.names) if diff else "<i>the configs are identical</i>"
    return (
        f"<div class='lnb-config-diff'><b>config: {len(diff)} change(s)</b> "
        f"<small>({same} unchanged paths omitted)</small>{shown}"
        f"<details><summary>show all {len(everything)} config paths</summary>"
        f"{_config_table(everything, c.names)}</details></div>"
    )


def _table(c: Comparison, kind: str, title: str) -> str:
    rows = [r for r in c.rows() if r["kind"] == kind]
    if not rows:
        return ""
    deltas = [k for k in rows[0] if k.startswith("delta")]
    head = "".join(f"<th>{_esc(n)}</th>" for n in c.names)
    head += "".join(f"<th>{_esc(d.replace('_pct', ' %'))}</th>" for d in deltas)
    body = []
    for row in rows:
        label = row["metric"]
        cells = []
        for name in c.names:
            text = _esc(_value(row[name], label))
            cells.append(f"<td><b>{text}</b></td>" if row["better"] == name else f"<td>{text}</td>")
        for d in deltas:
            text = _pct(row[d]) if "pct" in d else _delta(row[d], label)
            cells.append(f"<td>{_esc(text)}</td>")
        goal = "↑" if row["goal"] == "max" else "↓"
        body.append(
            f"<tr><td>{_esc(label)} <small title='better is {row['goal']}'>{goal}</small>"
            f"</td>{''.join(cells)}</tr>"
        )
    return (
        f"<div><b>{_esc(title)}</b> <small>(bold: better; ↑ higher is better, ↓ lower)"
        f"</small><table class='lnb-compare-{kind}'><tr><th></th>{head}</tr>"
        f"{''.join(body)}</table></div>"
    )


def _charts(c: Comparison, x: str) -> str:
    charts = []
    for split, feature, metric in c.headline_curves()[:6]:
        curves = c.curves(split, feature, metric, x=x)
        if curves:
            charts.append(
                svg_line_chart(
                    curves,
                    title=f"{split} {feature} {metric}",
                    x_label="elapsed s" if x == "elapsed" else x,
                    y_label=metric,
                    y_bounds=metric_bounds(metric),
                )
            )
    return "<div style='display:flex;flex-wrap:wrap;gap:8px'>" + "".join(charts) + "</div>"


def comparison_html(c: Comparison) -> str:
    """The whole panel (see the module doc)."""
    warnings = "".join(f"<li>{_esc(w)}</li>" for w in c.warnings)
    parts = [
        f"<div class='{CLASS}' style='border:1px solid #ddd;border-radius:4px;padding:6px 10px'>",
        f"<div><b>compare</b> {' vs '.join(_esc(n) for n in c.names)} "
        "<small>(deltas are run − base, the base is the first)</small></div>",
        _summary(c),
        f"<div class='lnb-warnings' style='color:#b26a00'><b>not comparable?</b><ul>{warnings}"
        "</ul></div>"
        if warnings
        else "",
        _config(c),
        _table(c, "metric", "metrics"),
        _table(c, "resource", "time and resources"),
        "<div><b>learning curves</b> (x: step)</div>",
        _charts(c, "step"),
        "<details><summary>x: epoch</summary>" + _charts(c, "epoch") + "</details>",
        "<details><summary>x: elapsed time</summary>" + _charts(c, "elapsed") + "</details>",
        "</div>",
    ]
    return "".join(parts)


Comparison.renderer = comparison_html
