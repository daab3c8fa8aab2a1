"""Display text for an ETA (durations and clock times are worded by core/formatting.py).

Pure: the current time and the time zone are parameters.
"""

from __future__ import annotations

import datetime as dt

from ludwig_nb.core.early_stop import StopForecast, format_forecast
from ludwig_nb.core.eta.plan import Estimate
from ludwig_nb.core.formatting import format_clock, format_duration

__all__ = ["WARMING_UP", "eta_sentence", "format_estimate"]

WARMING_UP = "warming up…"


def format_estimate(
    estimate: Estimate | None, now: float, tz: dt.tzinfo | None = None, *, bound: bool = False
) -> str:
    """The ETA in words: what every view shows after "ETA", and status.json's ``eta_text``.

    ``None`` -> ``"warming up…"``; warming up with a provisional number ->
    ``"warming up… ≈ 12 min"``; otherwise ``"≈ 12 min 30 s (11 min 50 s – 13 min 20 s) ·
    done ≈ 14:05"``, with ``" · adjusting…"`` after a regime change. ``bound`` (early
    stopping: the planned total is only an upper bound) reads ``"≤ 12 min 30 s (…) · done ≈
    14:05"`` and ``"warming up… ≤ 12 min"``. ``now`` is wall-clock seconds (``time.time()``);
    the estimate's ``at`` is ignored for the finish time, so a frozen (paused) estimate still
    reads from now.
    """
    if estimate is None:
        return WARMING_UP
    sign = "≤" if bound else "≈"
    point = format_duration(estimate.remaining_s)
    if estimate.state == "warming_up":
        return f"{WARMING_UP} {sign} {point}"
    low, high = format_duration(estimate.low_s), format_duration(estimate.high_s)
    interval = f" ({low} – {high})" if low != high else ""
    done = format_clock(now + max(0.0, estimate.remaining_s), now, tz)
    text = f"{sign} {point}{interval} · done ≈ {done}"
    if estimate.state == "adjusting":
        text += " · adjusting…"
    return text


def eta_sentence(
    estimate: Estimate | None,
    forecast: StopForecast | None,
    now: float,
    *,
    bounded_total: int = 0,
    tz: dt.tzinfo | None = None,
) -> str:
    """The ETA with the early-stop forecast: the dashboard's, text view's and terminal's words.

    ``bounded_total``: the planned total (steps) when early stopping bounds the run, 0 when it
    does not (then this is :func:`format_estimate`). Bounded: ``"≤ <ETA> · at most 11,000
    steps (early stopping); likely stops near step 2,900 (not before 2,400), ≈ 45 s from
    now"``: :func:`format_estimate` (``bound=True``), then
    :func:`~ludwig_nb.core.early_stop.format_forecast`, the two texts status.json carries as
    ``eta_text`` and ``early_stop.text``.
    """
    text = format_estimate(estimate, now, tz, bound=bool(bounded_total))
    if not bounded_total:
        return text
    return f"{text} · {format_forecast(forecast, bounded_total)}"
