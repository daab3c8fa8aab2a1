"""Pure text and HTML formatting for the dashboard, the text fallback and the summary.

Plain functions over :class:`~ludwig_nb.core.state.RunState`, numbers and snapshots; no
widgets, no clock reads (times are parameters), so they are tested without a front end.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ludwig_nb.core.early_stop import end_reason
from ludwig_nb.core.state import RunState
from ludwig_nb.core.status_text import alarm_line, pause_text

__all__ = [
    "STATUS_COLORS",
    "alarm_banner_html",
    "deadline_html",
    "error_html",
    "eta_line",
    "format_metric",
    "format_throughput",
    "format_tokens_per_s",
    "header_html",
    "pick_metric",
    "progress_text",
    "slowdown_html",
    "state_text",
]

#: status -> CSS colour of the header badge and the progress bar
STATUS_COLORS = {
    "queued": "#757575",
    "preprocessing": "#1976d2",
    "training": "#1976d2",
    "evaluating": "#6a1b9a",
    "paused": "#ef6c00",
    "stopping": "#ef6c00",
    "completed": "#2e7d32",
    "stopped": "#616161",
    "failed": "#c62828",
    "interrupted": "#c62828",
}

#: the metric the chart shows, in order of preference: the first a run reports wins
#: (accuracy-like scores, where higher is better, then the error metrics of a regression,
#: where lower is)
_PREFERRED_METRICS = (
    "accuracy",
    "roc_auc",
    "r2",
    "mean_absolute_error",
    "root_mean_squared_error",
    "mean_squared_error",
    "hits_at_k",
    "jaccard",
)


def format_throughput(samples_per_s: float | None) -> str:
    """``"1,234 samples/s"``, ``"12.5 samples/s"``; ``"–"`` when unknown."""
    if samples_per_s is None or not math.isfinite(samples_per_s) or samples_per_s < 0:
        return "–"
    if samples_per_s >= 100:
        return f"{samples_per_s:,.0f} samples/s"
    return f"{samples_per_s:.1f} samples/s"


def format_tokens_per_s(rates: tuple[float, float] | None, samples_per_s: float | None) -> str:
    """``"5,300 tokens/s (6,100 padded) · 12.5 samples/s"``; ``"–"`` when unknown."""
    if rates is None or not all(math.isfinite(r) and r >= 0 for r in rates):
        return format_throughput(samples_per_s)
    real, padded = rates
    return f"{real:,.0f} tokens/s ({padded:,.0f} padded) · {format_throughput(samples_per_s)}"


def format_metric(value: object) -> str:
    """A metric value with four significant digits; ``"–"`` for non-numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.4g}"


def progress_text(state: RunState) -> str:
    """``"step 1,200 / 3,000 · epoch 2 / 5"`` (epochs 1-based for people).

    Before the first step, what preprocessing works on (``"preprocessing 5,000 rows · 8 input
    features, 1 output"``) instead of an empty counter.
    """
    if state.status in ("queued", "preprocessing") and not state.step and not state.total_steps:
        detail = f" {state.phase_detail}" if state.phase_detail else "…"
        return f"{'preprocessing' if state.status == 'preprocessing' else 'starting'}{detail}"
    total = f"{state.total_steps:,}" if state.total_steps else "?"
    text = f"step {state.step:,} / {total}"
    if state.epochs:
        epoch = min(state.epoch + 1, state.epochs) if state.step else 0
        if state.status == "completed":
            epoch = state.epochs
        text += f" · epoch {epoch} / {state.epochs}"
    return text


def state_text(state: RunState) -> str:
    """The state in words.

    ``"paused: GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 82 °C"``, ``"paused by
    you"``, or the status.
    """
    if state.status == "paused":
        return pause_text(state)
    return state.status


def eta_line(state: RunState, eta_text: str) -> str:
    """The ETA line: ``"ETA ≈ 5 min …"``; paused: the estimate frozen; ended: how."""
    if state.status == "completed":
        ended = end_reason(state)
        return f"done · {ended}" if ended else "done"
    if state.is_final:
        return end_reason(state) or state.status
    if state.status == "paused":
        return f"paused · estimate frozen: {eta_text}"
    if state.status in ("queued", "preprocessing") and not state.step:
        return "ETA after the first steps"
    return f"ETA {eta_text}"


def header_html(state: RunState) -> str:
    """Run name, a coloured state badge, engine and device."""
    color = STATUS_COLORS.get(state.status, "#757575")
    name = html.escape(state.name or state.run_id or "run")
    badge = (
        f'<span class="lnb-state" style="background:{color};color:white;border-radius:3px;'
        f'padding:1px 6px;font-size:90%">{html.escape(state_text(state))}</span>'
    )
    parts = (state.engine, state.device, "" if state.is_final else state.phase_detail)
    details = " · ".join(html.escape(p) for p in parts if p)
    return f"<b>{name}</b> {badge} <span style='color:#666'>{details}</span>"


def error_html(message: str, traceback_text: str) -> str:
    """The failure message in red with the traceback behind a disclosure."""
    body = (
        f'<div class="lnb-error" style="color:#c62828"><b>Training failed:</b> '
        f"{html.escape(message)}</div>"
    )
    if traceback_text:
        body += (
            '<details class="lnb-traceback"><summary>traceback</summary>'
            f'<pre style="font-size:85%;white-space:pre-wrap">{html.escape(traceback_text)}'
            "</pre></details>"
        )
    return body


def alarm_banner_html(alarms: Sequence[Mapping[str, object]]) -> str:
    """A banner per active alarm, in words and with what it does; ``""`` when none."""
    parts = []
    for alarm in alarms:
        action = str(alarm.get("action", "warn"))
        color = "#c62828" if action in ("pause", "stop") else "#ef6c00"
        parts.append(
            f'<div class="lnb-alarm" style="background:{color};color:white;padding:2px 6px;'
            f'border-radius:3px;margin:2px 0">⚠ {html.escape(alarm_line(alarm))}</div>'
        )
    return "".join(parts)


#: a deadline's verdict -> the banner's colour
_VERDICT_COLORS = {"ok": "#2e7d32", "unknown": "#757575", "at_risk": "#ef6c00", "late": "#c62828"}


def deadline_html(deadline: Mapping[str, object] | None) -> str:
    """The deadline against the ETA as a coloured line (``""`` without a deadline).

    ``deadline``: ``EtaReading.deadline`` (``{"verdict", "text", ...}``).
    """
    if not deadline or not deadline.get("text") or deadline.get("verdict") == "passed":
        return ""
    color = _VERDICT_COLORS.get(str(deadline.get("verdict")), "#757575")
    return (
        f'<div class="lnb-deadline" data-verdict="{html.escape(str(deadline.get("verdict")))}" '
        f'style="color:{color};margin:2px 0">⏰ {html.escape(str(deadline["text"]))}</div>'
    )


def slowdown_html(state: Any) -> str:
    """A GPU losing much of the last minute to throttling (``RunState.gpu_slowdown``), or ""."""
    text = getattr(state, "gpu_slowdown", "")
    if not text or getattr(state, "is_final", False):
        return ""
    return (
        '<div class="lnb-slowdown" style="background:#ef6c00;color:white;padding:2px 6px;'
        f'border-radius:3px;margin:2px 0">⚠ {html.escape(text)} · the ETA restarted from the '
        "slower steps</div>"
    )


def pace_html(state: Any) -> str:
    """One line per thing slowing the run on purpose.

    ``RunState.throttle``, a batch split by out-of-memory recovery; an empty string when none.
    """
    lines = []
    if getattr(state, "throttle", ""):
        idle = getattr(state, "throttled_s", 0.0)
        lines.append(f"{state.throttle} (idle {idle:.0f} s so far)")
    if getattr(state, "micro_batch_size", 0):
        lines.append(
            f"out of GPU memory: batches of {state.batch_size} run as micro-batches "
            f"of {state.micro_batch_size} (same effective batch)"
        )
    return "".join(
        '<div class="lnb-pace" style="background:#1565c0;color:white;padding:2px 6px;'
        f'border-radius:3px;margin:2px 0">{html.escape(line)}</div>'
        for line in lines
    )


def pick_metric(metrics: Mapping[str, object]) -> tuple[str, str] | None:
    """``(output feature, metric)`` to chart from ``{split: {feature: {metric: value}}}``.

    Prefers the first output feature over ``"combined"`` and a quality metric (accuracy,
    ROC AUC, …) over loss; None when there is no non-loss metric.
    """
    split = (
        metrics.get("validation") or metrics.get("training") or next(iter(metrics.values()), None)
    )
    if not isinstance(split, Mapping):
        return None
    features = [f for f in split if f != "combined"] + (["combined"] if "combined" in split else [])
    for feature in features:
        names = split.get(feature)
        if not isinstance(names, Mapping):
            continue
        for preferred in _PREFERRED_METRICS:
            if preferred in names:
                return feature, preferred
        others = [n for n in names if n != "loss"]
        if others:
            return feature, others[0]
    return None
