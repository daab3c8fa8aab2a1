"""Axis ticks people can read: round numbers, few of them, inside the data's range (pure).

:func:`nice_ticks` gives 1-2-5 steps (``0, 500, 1,000, 1,500``) over a linear range and
:func:`log_ticks` decades (with 2 and 5, or 3, between them when the range spans few decades).
Both return the axis range too, widened to the outer ticks, so that no data point falls
outside the axis and the first and last labels sit on the axis ends. :func:`tick_label`
writes one tick with as many decimals as the step needs (``"0.25"``, ``"2,000"``, ``"1e-05"``).
"""

from __future__ import annotations

import math

__all__ = ["Ticks", "bounded_ticks", "ema", "log_ticks", "nice_ticks", "tick_label"]

#: ``(ticks, axis low, axis high)``
Ticks = tuple[list[float], float, float]


def _nice_step(span: float, max_ticks: int) -> float:
    raw = span / max(1, max_ticks - 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if factor * power >= raw:
            return float(factor * power)
    return float(10 * power)


def nice_ticks(
    low: float,
    high: float,
    max_ticks: int = 5,
    floor: float | None = None,
    outward: bool = True,
) -> Ticks:
    """At most ``max_ticks`` round ticks covering ``[low, high]``.

    ``floor`` (e.g. 0 for steps) keeps the axis from starting below it. ``outward``: the axis widens
    to the outer ticks (a y axis); else it stays ``[low, high]`` with the ticks inside (an x axis
    that ends at the last step). Non-finite input gives ``[0, 1]``.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0], 0.0, 1.0
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.05 or 0.5
        low, high = low - pad, high + pad
    step = _nice_step(high - low, max_ticks)
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    if floor is not None and start < floor:
        start = floor
    while (end - start) / step + 1 > max_ticks + 0.5:  # rounding out added one tick too many
        step = _nice_step(end - start, max_ticks - 1) if max_ticks > 2 else end - start
        start = math.floor(low / step + 1e-9) * step
        end = math.ceil(high / step - 1e-9) * step
        if floor is not None and start < floor:
            start = floor
    if not outward:
        return _inside(low if floor is None else max(low, floor), high, max_ticks)
    count = round((end - start) / step)
    ticks = [_clean(start + i * step, step) for i in range(count + 1)]
    return ticks, ticks[0], ticks[-1]


def bounded_ticks(
    low: float, high: float, bounds: tuple[float | None, float | None], max_ticks: int = 5
) -> Ticks:
    """:func:`nice_ticks` of a y axis that never runs past ``bounds`` (a metric's own range).

    ``bounds``: the least and most values the quantity can take (None: unbounded), e.g.
    ``(None, 1.0)`` for r2, ``(0.0, 1.0)`` for accuracy. The axis widens to round ticks as
    usual, then stops at a bound it would pass (which then ends the axis, ticks beyond it
    dropped): an r2 that rose to 0.9 ends at 1, not at 5.
    """
    ticks, start, end = nice_ticks(low, high, max_ticks=max_ticks)
    least, most = bounds
    if most is not None and end > most >= high:
        end = most
        ticks = [t for t in ticks if t <= most + 1e-12]
    if least is not None and start < least <= low:
        start = least
        ticks = [t for t in ticks if t >= least - 1e-12]
    return ticks, start, end


def _inside(low: float, high: float, max_ticks: int) -> Ticks:
    step = _nice_step(high - low, max_ticks)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(_clean(value, step))
        value += step
    return ticks, low, high


def _clean(value: float, step: float) -> float:
    digits = max(0, -math.floor(math.log10(step)) + 2)
    return round(value, digits)


def log_ticks(low: float, high: float, max_ticks: int = 6) -> Ticks:
    """Ticks for a log axis over ``[low, high]`` (both > 0).

    Decades, plus 2 and 5 within 1.2 decades, or 3 within three. Raises ``ValueError`` for a bound
    <= 0.
    """
    if not (low > 0 and high > 0) or not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("a log axis needs positive, finite bounds")
    if high < low:
        low, high = high, low
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    if last == first:
        last += 1
    decades = last - first
    span = math.log10(high / low)
    factors: tuple[float, ...] = (1, 2, 5) if span < 1.2 else (1, 3) if span < 3 else (1,)
    every = max(1, math.ceil((decades + 1) / max_ticks))
    last += (-(last - first)) % every  # the top decade must be one that gets a tick
    candidates = [
        f * 10.0**d for d in range(first, last + 1) if (d - first) % every == 0 for f in factors
    ]
    axis_low = max(v for v in candidates if v <= low * (1 + 1e-9))
    axis_high = min(v for v in candidates if v >= high * (1 - 1e-9))
    ticks = [float(f"{v:.12g}") for v in candidates if axis_low <= v <= axis_high]
    return ticks, ticks[0], ticks[-1]


def tick_label(value: float, step: float | None = None, log: bool = False) -> str:
    """One tick's text: thousands separators, only the decimals the step needs."""
    if not math.isfinite(value):
        return ""
    if log:
        return f"{value:.3g}" if 1e-3 <= abs(value) < 1e5 else f"{value:.0e}"
    if value == 0:
        return "0"
    step = step if step and step > 0 else abs(value)
    if abs(value) >= 1e6 or (abs(value) < 1e-3 and step < 1e-4):
        return f"{value:.3g}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if step * 10**decimals % 1 > 1e-6:  # 2.5-steps need one decimal more
        decimals += 1
    return f"{value:,.{min(decimals, 8)}f}"


def ema(values: list[float], span: float) -> list[float]:
    """Exponential moving average with TensorBoard's debiasing.

    The first points are not pulled toward zero; ``span`` points ≈ the window (weight ``1 - 2 /
    (span + 1)``).
    """
    weight = 1.0 - 2.0 / (max(1.0, span) + 1.0)
    out: list[float] = []
    last, count = 0.0, 0
    for value in values:
        if not math.isfinite(value):
            out.append(out[-1] if out else value)
            continue
        last = last * weight + (1 - weight) * value
        count += 1
        out.append(last / (1 - weight**count))
    return out
