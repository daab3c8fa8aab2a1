"""The static summary a cell keeps when its run ends: HTML with inline SVG, plus plain text.

Displayed through a display handle (not a widget), so a saved notebook shows it on
reopening, on GitHub and in nbviewer. Pure: everything it needs is passed in.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.baseline import compare_to_baseline, format_comparison, headline_split
from ludwig_nb.core.early_stop import end_reason
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_text import took_text
from ludwig_nb.ui.charts.curves import CurveData
from ludwig_nb.ui.charts.svg import svg_line_chart
from ludwig_nb.ui.formatting import (
    error_html,
    format_metric,
    header_html,
    pick_metric,
    progress_text,
)
from ludwig_nb.ui.llm_view import llm_panel_html
from ludwig_nb.ui.resources import resources_line

__all__ = [
    "baseline_lines",
    "metrics_label",
    "metrics_table_html",
    "summary_html",
    "summary_mimebundle",
    "summary_text",
]

SUMMARY_CLASS = "ludwig-nb-summary"


def _baseline_cells(
    baseline: Mapping[str, object], predictors: Mapping[str, str], split: str | None
) -> dict[tuple[str, str], str]:
    """``{(feature, metric): "always 'no': 0.859"}`` on ``split``."""
    values = baseline.get(split or "", {})
    if not isinstance(values, Mapping):
        return {}
    return {
        (feature, name): f"{predictors.get(feature, 'baseline')}: {format_metric(value)}"
        for feature, names in values.items()
        if isinstance(names, Mapping)
        for name, value in names.items()
    }


def metrics_table_html(
    metrics: Mapping[str, Any],
    baseline: Mapping[str, object] | None = None,
    predictors: Mapping[str, str] | None = None,
) -> str:
    """``{split: {feature: {metric: value}}}`` as a table.

    One row per feature and metric, with the trivial baseline's value on the headline split in a
    last column.
    """
    splits = [s for s in metrics if isinstance(metrics[s], Mapping)]
    rows: dict[tuple[str, str], dict[str, object]] = {}
    for split in splits:
        for feature, names in metrics[split].items():
            if not isinstance(names, Mapping):
                continue
            for name, value in names.items():
                rows.setdefault((feature, name), {})[split] = value
    if not rows:
        return ""
    lead = headline_split(metrics)
    base = _baseline_cells(baseline or {}, predictors or {}, lead)
    head = "".join(f"<th>{html.escape(s)}</th>" for s in splits)
    if base:
        head += f"<th>trivial baseline ({html.escape(lead or '')})</th>"
    body = "".join(
        f"<tr><td>{html.escape(feature)}</td><td>{html.escape(name)}</td>"
        + "".join(f"<td>{format_metric(values.get(s))}</td>" for s in splits)
        + (
            f'<td class="lnb-baseline" style="color:#666">'
            f"{html.escape(base.get((feature, name), ''))}</td>"
            if base
            else ""
        )
        + "</tr>"
        for (feature, name), values in rows.items()
    )
    return (
        '<table class="lnb-metrics" style="font-size:90%">'
        f"<tr><th>feature</th><th>metric</th>{head}</tr>{body}</table>"
    )


def baseline_lines(state: RunState) -> list[str]:
    """``["test churn accuracy 0.9412 · always 'no': 0.859"]`` for the best metrics."""
    metrics = state.best_metrics or state.latest_metrics
    return [
        format_comparison(c)
        for c in compare_to_baseline(metrics, state.baseline, state.baseline_predictors)
    ]


def _baseline_html(state: RunState) -> str:
    metrics = state.best_metrics or state.latest_metrics
    parts = []
    for c in compare_to_baseline(metrics, state.baseline, state.baseline_predictors):
        color = "#2e7d32" if c.verdict == "better" else "#c62828"
        parts.append(
            f'<div class="lnb-vs-baseline" data-verdict="{html.escape(c.verdict)}" '
            f'style="color:{color}">{html.escape(format_comparison(c))}</div>'
        )
    return "".join(parts)


def metrics_label(state: RunState) -> str:
    """``"best evaluation (step 2,035)"`` or ``"latest evaluation"``."""
    if state.best_metrics:
        step = f" (step {state.best_step:,})" if state.best_step else ""
        return f"best evaluation{step}"
    return "latest evaluation"


def _timing_line(state: RunState, first_finish: float | None) -> str:
    line = took_text(state)
    if not line or state.finished_at is None or state.started_at is None:
        return ""
    if state.paused_seconds > 0:
        line += f" (paused {format_duration(state.paused_seconds)})"
    if first_finish is not None and state.status == "completed":
        predicted = first_finish - state.started_at
        error = state.finished_at - first_finish
        side = "later" if error > 0 else "earlier"
        line += (
            f" · first ETA said {format_duration(predicted)}: "
            f"finished {format_duration(abs(error))} {side}"
        )
    return line


def summary_html(
    state: RunState,
    curves: CurveData,
    *,
    first_finish: float | None = None,
    traceback_text: str = "",
    directory: str = "",
    resources: Mapping[str, object] | None = None,
) -> str:
    """The final summary: header, progress, timing, metrics table, loss and metric SVGs.

    ``first_finish`` is the wall time (seconds) of the first stable ETA prediction;
    ``resources``: the run's profile summary (one "resources" line).
    """
    metrics = state.best_metrics or state.latest_metrics
    border = "#c62828" if state.status == "failed" else "#ddd"
    parts = [
        f'<div class="{SUMMARY_CLASS}" data-status="{html.escape(state.status)}" '
        f'style="border:1px solid {border};border-radius:4px;padding:6px 10px">',
        f"<div>{header_html(state)}</div>",
        f"<div>{html.escape(progress_text(state))}",
    ]
    timing = _timing_line(state, first_finish)
    parts.append(f" · {html.escape(timing)}</div>" if timing else "</div>")
    ended = end_reason(state)
    if ended:
        parts.append(f'<div class="lnb-end-reason">{html.escape(ended)}</div>')
    parts.extend(
        f'<div class="lnb-warning" style="color:#b26a00">⚠ {html.escape(w)}</div>'
        for w in state.warnings
    )
    if state.batch_note:
        note = html.escape(state.batch_note)
        parts.append(f'<div class="lnb-batch-note" style="color:#666">{note}</div>')
    if state.status == "failed":
        parts.append(error_html(state.error or state.reason, traceback_text))
    parts.append(llm_panel_html(state))  # an LLM run's model, tokens and last answers
    if resources_line(resources):
        parts.append(f"<div class='lnb-resources'>{html.escape(resources_line(resources))}</div>")
    if metrics:
        table = metrics_table_html(metrics, state.baseline, state.baseline_predictors)
        parts.append(
            f"<div><b>{html.escape(metrics_label(state))}</b>{_baseline_html(state)}{table}</div>"
        )
    parts.append(
        '<div style="display:flex;flex-wrap:wrap;gap:8px">'
        + svg_line_chart(curves.loss_curves(), title="loss", y_label="loss", y_bounds=(0.0, None))
        + (
            svg_line_chart(
                curves.metric_curves(),
                title=curves.metric_label,
                y_label=curves.metric_name,
                y_bounds=curves.metric_bounds,
            )
            if curves.metric_curves()
            else ""
        )
        + "</div>"
    )
    if directory:
        parts.append(f"<div style='color:#666;font-size:85%'>{html.escape(directory)}</div>")
    parts.append("</div>")
    return "".join(parts)


def _headline_metrics(metrics: Mapping[str, object]) -> list[str]:
    """``["validation churn accuracy=0.91", "validation combined loss=0.23"]``."""
    picked = pick_metric(metrics)
    shown = []
    for split in ("validation", "test", "training"):
        values = metrics.get(split)
        if not isinstance(values, Mapping):
            continue
        if picked is not None:
            value = values.get(picked[0], {}).get(picked[1])
            if value is not None:
                shown.append(f"{split} {picked[0]} {picked[1]}={format_metric(value)}")
        loss = values.get("combined", {}).get("loss")
        if loss is not None:
            shown.append(f"{split} loss={format_metric(loss)}")
        if shown:
            break
    return shown


def summary_text(state: RunState) -> str:
    """Plain text for terminals and ``text/plain``.

    One line, then the metrics beside the trivial baseline on their own lines.
    """
    metrics = state.best_metrics or state.latest_metrics
    text = f"{state.name or state.run_id}: {state.status}, {progress_text(state)}"
    took = took_text(state)
    if took:
        text += f", {took}"
    if state.status == "failed":
        text += f" — {state.error}"
    ended = end_reason(state)
    if ended:
        text += f" — {ended}"
    versus = baseline_lines(state)
    shown = "; ".join(versus) if versus else ", ".join(_headline_metrics(metrics))
    if shown:
        text += f"\n{metrics_label(state)}: {shown}"
    text += "".join(f"\n⚠ {warning}" for warning in state.warnings)
    if state.batch_note:
        text += f"\n{state.batch_note}"
    return text


def summary_mimebundle(html_text: str, state: RunState) -> dict[str, str]:
    """The final summary's display bundle: ``html_text`` and its plain-text twin for ``state``."""
    return {"text/html": html_text, "text/plain": summary_text(state)}
