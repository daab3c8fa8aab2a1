"""The one formatter of each kind: durations, clock times and byte counts, as people read them.

Every view (dashboard, text view, summary, CLI, sidebar-facing status, search panel, compare
view, pre-flight estimate) words these through here. Pure: the current time and the time
zone are parameters.

>>> format_duration(750)
'12 min 30 s'
>>> format_bytes(10.2 * 2**30)
'10.2 GiB'
"""

from __future__ import annotations

import datetime as dt
import math

__all__ = ["UNKNOWN", "format_bytes", "format_clock", "format_duration", "format_duration_fine"]

#: what a duration reads as when it is not known (None or NaN)
UNKNOWN = "–"

# (below this many seconds, round to this many): 1 s under a minute, 5 s under 10 min,
# 10 s under an hour, 1 min under 10 h, 10 min under 2 days, else 1 h
_ROUNDING = ((60, 1), (600, 5), (3600, 10), (36000, 60), (172800, 600))


def format_duration(seconds: float | None) -> str:
    """A duration in seconds as people read it.

    ``"45 s"``, ``"3 min 25 s"``, ``"12 min 30 s"``, ``"1 h 20 min"``, ``"2 d 5 h"``, rounded
    coarser as it grows (see ``_ROUNDING``). Negative and -0 read as ``"0 s"``, infinity as ``"∞"``,
    None and NaN as :data:`UNKNOWN`.
    """
    if seconds is None or math.isnan(seconds):
        return UNKNOWN
    if not seconds > 0:
        return "0 s"
    if math.isinf(seconds):
        return "∞"
    for limit, unit in _ROUNDING:
        if seconds < limit:
            return _spell(_round_to(seconds, unit))
    return _spell(_round_to(seconds, 3600))


def format_duration_fine(seconds: float | None) -> str:
    """:func:`format_duration` with tenths of a second under 10 s (``"0.3 s"``, ``"4.6 s"``).

    For the parts of a short run (a pre-flight's breakdown), which whole seconds round to 0.
    """
    if seconds is not None and 0 < seconds < 9.95:
        return f"{seconds:.1f} s"
    return format_duration(seconds)


def _round_to(seconds: float, unit: int) -> int:
    return math.floor(seconds / unit + 0.5) * unit


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
    """A wall-clock time (seconds since the epoch) as ``"14:05"``.

    On another day than ``now`` the weekday is added (``"Tue 09:10"``). ``tz=None`` = the
    local zone.
    """
    at = dt.datetime.fromtimestamp(when, tz)
    today = dt.datetime.fromtimestamp(now, tz)
    if at.date() == today.date():
        return at.strftime("%H:%M")
    return at.strftime("%a %H:%M")


def format_bytes(count: float | None) -> str:
    """Bytes in binary units: ``"512 B"``, ``"10.2 GiB"``; ``"N/A"`` when unknown."""
    if count is None:
        return "N/A"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
