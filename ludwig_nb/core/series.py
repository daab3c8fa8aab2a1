"""Bounded time series: recent points kept as they came, older ones averaged down.

A 24-hour run sampled at 1 Hz is 86,400 points per metric. :class:`Series` keeps the newest
``capacity`` points raw (tier 0); when a tier is full its oldest ``factor`` points are merged
into one point (mean time, mean value, max value) of the next tier, and the last tier drops
its oldest points. With the defaults (capacity 1200, factor 4, 5 tiers) that is 20 minutes
raw, then 4-second, 16-second, 64-second and 256-second points: more than 24 hours in at
most 6,000 points, 144 kB, per series.

Missing readings are stored as NaN (a gap in a plot) and ignored by the merge.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left

__all__ = ["Series", "SeriesTable"]


class _Tier:
    __slots__ = ("peaks", "times", "values")

    def __init__(self) -> None:
        self.times = array("d")
        self.values = array("d")
        self.peaks = array("d")

    def __len__(self) -> int:
        return len(self.times)

    def append(self, t: float, value: float, peak: float) -> None:
        self.times.append(t)
        self.values.append(value)
        self.peaks.append(peak)

    def pop_front(self, n: int) -> tuple[float, float, float]:
        """Remove the ``n`` oldest points and return them merged (mean t, mean, max)."""
        times, values, peaks = self.times[:n], self.values[:n], self.peaks[:n]
        del self.times[:n], self.values[:n], self.peaks[:n]
        present = [(v, p) for v, p in zip(values, peaks, strict=True) if not math.isnan(v)]
        if not present:
            return sum(times) / n, math.nan, math.nan
        mean = sum(v for v, _ in present) / len(present)
        return sum(times) / n, mean, max(p for _, p in present)


class Series:
    """One metric over time, bounded in memory.

    ``capacity``: points per tier; ``factor``: raw points per merged point between tiers;
    ``tiers``: how many tiers (the last one drops its oldest points). Raises ``ValueError``
    for a capacity smaller than ``factor`` or a factor under 2.
    """

    def __init__(self, capacity: int = 1200, factor: int = 4, tiers: int = 5) -> None:
        if factor < 2 or capacity < factor or tiers < 1:
            raise ValueError("Series needs factor >= 2, capacity >= factor and tiers >= 1")
        self.capacity = capacity
        self.factor = factor
        self._tiers = [_Tier() for _ in range(tiers)]

    def append(self, t: float, value: float | None) -> None:
        """Add a reading at ``t`` seconds; ``None`` records a gap."""
        v = math.nan if value is None else float(value)
        self._tiers[0].append(t, v, v)
        for level, tier in enumerate(self._tiers):
            if len(tier) <= self.capacity:
                break
            if level + 1 == len(self._tiers):
                tier.pop_front(len(tier) - self.capacity)
            else:
                self._tiers[level + 1].append(*tier.pop_front(self.factor))

    def __len__(self) -> int:
        return sum(len(t) for t in self._tiers)

    @property
    def nbytes(self) -> int:
        """Bytes held by the stored points (the arrays' payload)."""
        return sum(len(t) * 3 * 8 for t in self._tiers)

    def _columns(self, since: float | None, which: str) -> tuple[list[float], list[float]]:
        times: list[float] = []
        values: list[float] = []
        for tier in reversed(self._tiers):  # oldest (coarsest) first
            start = 0 if since is None else bisect_left(tier.times, since)
            times.extend(tier.times[start:])
            values.extend(getattr(tier, which)[start:])
        return times, values

    def columns(self, since: float | None = None) -> tuple[list[float], list[float]]:
        """``(times, values)`` as two lists, oldest first (cheaper than :meth:`points`).

        ``since`` (seconds): keep points at or after that time.
        """
        return self._columns(since, "values")

    def points(self, since: float | None = None) -> list[tuple[float, float]]:
        """``(time, value)`` pairs, oldest first; merged points carry the mean.

        ``since`` (seconds): keep points at or after that time.
        """
        return list(zip(*self._columns(since, "values"), strict=True))

    def peaks(self, since: float | None = None) -> list[tuple[float, float]]:
        """Like :meth:`points` but merged points carry the maximum (for temperatures)."""
        return list(zip(*self._columns(since, "peaks"), strict=True))

    def last(self) -> tuple[float, float] | None:
        """The latest ``(time, value)`` appended; None while empty."""
        tier = self._tiers[0]
        if not len(tier):
            return None
        return tier.times[-1], tier.values[-1]


class SeriesTable:
    """Named series created on first use, e.g. ``("gpu0", "temperature")``.

    Every series gets the same ``capacity``/``factor``/``tiers``.
    """

    def __init__(self, capacity: int = 1200, factor: int = 4, tiers: int = 5) -> None:
        Series(capacity, factor, tiers)  # validate once, fail at construction
        self._shape = (capacity, factor, tiers)
        self._series: dict[tuple[str, str], Series] = {}

    def append(self, key: tuple[str, str], t: float, value: float | None) -> None:
        """Append ``(t, value)`` to the series ``key`` (e.g. ``("gpu0", "temperature")``).

        The series is created on first use.
        """
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = Series(*self._shape)
        series.append(t, value)

    def get(self, key: tuple[str, str]) -> Series | None:
        """The series ``key``; None when nothing was appended to it."""
        return self._series.get(key)

    def keys(self) -> list[tuple[str, str]]:
        """The keys of every series, in the order they first appeared."""
        return list(self._series)

    @property
    def nbytes(self) -> int:
        """Memory held by every series' arrays, in bytes."""
        return sum(s.nbytes for s in self._series.values())
