"""Display text for an ETA: durations, clock times and the dashboard's ETA line.

Pure: the current time and the time zone are parameters.

>>> format_duration(750)
'12 min 30 s'
"""

from __future__ import annotations

import datetime as dt
import math

from ludwig_nb.core.eta.estimate import Estimate

__all__ = [
    "WARMING_UP",
    "format_clock",
    "format_duration",
    "format_estimate",
    "format_eta",
]

WARMING_UP = "warming up…"


def _round_to(seconds: float, unit: int) -> int:
    return math.floor(seconds / unit + 0.5) * unit


def format_duration(seconds: float) -> str:
    """A duration as people read it.

    ``"45 s"``, ``"3 min 25 s"``, ``"12 min 30 s"``,
    ``"1 h 20 min"``, ``"2 d 5 h"``. Rounded to 1 s below a minute, 5 s below 10 min,
    10 s below an hour, 1 min below 10 h, 10 min below 2 days, else 1 h. Negative,
    NaN and -0 read as ``"0 s"``.
    """
    if not seconds > 0:  # also NaN
        return "0 s"
    if math.isinf(seconds):
        return "∞"
    for limit, unit in ((60, 1), (600, 5), (3600, 10), (36000, 60), (172800, 600)):
        if seconds < limit:
            return _spell(_round_to(seconds, unit))
    return _spell(_round_to(seconds, 3600))


def _spell(total: int) -> str:
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def format_clock(when: float, now: float, tz: dt.tzinfo | None = None) -> str:
    """``"14:05"`` for a wall-clock time (seconds since the epoch) on the day of ``now``.

    A weekday is added on another day (``"Tue 09:10"``). ``tz=None`` = local zone.
    """
    at = dt.datetime.fromtimestamp(when, tz)
    today = dt.datetime.fromtimestamp(now, tz)
    if at.date() == today.date():
        return at.strftime("%H:%M")
    return at.strftime("%a %H:%M")


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


#: The name the CLI and the dashboard look up.
format_eta = format_estimate
