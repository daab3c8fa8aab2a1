"""Display text for an ETA (durations and clock times are worded by core/formatting.py).

Pure: the current time and the time zone are parameters.
"""

from __future__ import annotations

import datetime as dt

from ludwig_nb.core.eta.plan import Estimate
from ludwig_nb.core.formatting import format_clock, format_duration

__all__ = ["WARMING_UP", "format_estimate"]

WARMING_UP = "warming up…"


def format_estimate(estimate: Estimate | None, now: float, tz: dt.tzinfo | None = None) -> str:
    """The dashboard's ETA line.

    ``None`` -> ``"warming up…"``; warming up with a provisional number ->
    ``"warming up… ≈ 12 min"``; otherwise ``"≈ 12 min 30 s (11 min 50 s – 13 min 20 s) ·
    done ≈ 14:05"``, with ``" · adjusting…"`` after a regime change. ``now`` is wall-clock
    seconds (``time.time()``); the estimate's ``at`` is ignored for the finish time, so a
    frozen (paused) estimate still reads from now.
    """
    if estimate is None:
        return WARMING_UP
    point = format_duration(estimate.remaining_s)
    if estimate.state == "warming_up":
        return f"{WARMING_UP} ≈ {point}"
    low, high = format_duration(estimate.low_s), format_duration(estimate.high_s)
    interval = f" ({low} – {high})" if low != high else ""
    done = format_clock(now + max(0.0, estimate.remaining_s), now, tz)
    text = f"≈ {point}{interval} · done ≈ {done}"
    if estimate.state == "adjusting":
        text += " · adjusting…"
    return text
