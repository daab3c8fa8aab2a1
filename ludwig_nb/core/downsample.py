"""Min/max-preserving downsampling for curves, so a million-step run stays light to draw.

Two tools over ``(x, y)`` points with increasing ``x``:

* :func:`downsample_minmax` reduces a finished list to at most ``max_points`` points. It
  splits the points into equal buckets and keeps each bucket's lowest and highest point
  (in ``x`` order), plus the first and last point, so every spike and dip stays visible.
* :class:`MinMaxSeries` does the same incrementally with bounded memory: points are
  folded into buckets of ``width`` consecutive points; when the buckets fill, adjacent
  pairs merge and ``width`` doubles. Appending is O(1) amortised and the global minimum,
  maximum and latest point are always kept exactly.

Non-finite ``y`` values (a NaN loss) are skipped: they cannot be drawn. Pure standard library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["MinMaxSeries", "downsample_minmax"]

Point = tuple[float, float]


def _bucket_extremes(points: Sequence[Point]) -> list[Point]:
    """The lowest and highest point of ``points`` in ``x`` order (one point if they coincide)."""
    low = min(range(len(points)), key=lambda i: points[i][1])
    high = max(range(len(points)), key=lambda i: points[i][1])
    if low == high:
        return [points[low]]
    first, second = sorted((low, high))
    return [points[first], points[second]]


def downsample_minmax(
    xs: Sequence[float], ys: Sequence[float], max_points: int
) -> tuple[list[float], list[float]]:
    """At most ``max_points`` points of the curve ``(xs, ys)`` keeping every bucket's extremes.

    The first and last finite points are always kept, and so are the global minimum and
    maximum. Raises ``ValueError`` when ``xs`` and ``ys`` differ in length or
    ``max_points < 4``.
    """
    if len(xs) != len(ys):
        raise ValueError("xs and ys must have the same length")
    if max_points < 4:
        raise ValueError("max_points must be at least 4")
    points = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True) if math.isfinite(y)]
    if len(points) <= max_points:
        return [p[0] for p in points], [p[1] for p in points]
    inner = points[1:-1]
    buckets = (max_points - 2) // 2
    kept: list[Point] = [points[0]]
    for b in range(buckets):
        lo = b * len(inner) // buckets
        hi = (b + 1) * len(inner) // buckets
        if hi > lo:
            kept.extend(_bucket_extremes(inner[lo:hi]))
    kept.append(points[-1])
    return [p[0] for p in kept], [p[1] for p in kept]


class _Bucket:
    """Extremes of ``count`` consecutive points."""

    __slots__ = ("count", "high", "low")

    def __init__(self, point: Point) -> None:
        self.low = point
        self.high = point
        self.count = 1

    def add(self, point: Point) -> None:
        if point[1] < self.low[1]:
            self.low = point
        if point[1] > self.high[1]:
            self.high = point
        self.count += 1

    def merge(self, other: _Bucket) -> None:
        if other.low[1] < self.low[1]:
            self.low = other.low
        if other.high[1] > self.high[1]:
            self.high = other.high
        self.count += other.count

    def points(self) -> list[Point]:
        if self.low == self.high:
            return [self.low]
        return sorted((self.low, self.high))


class MinMaxSeries:
    """A growing curve kept in at most ``max_points`` points (bounded memory, exact extremes).

    ``max_points`` must be at least 4. :attr:`count` is the number of finite points ever
    appended; :meth:`points` returns the drawable points in ``x`` order, ending with the
    latest point appended.
    """

    def __init__(self, max_points: int = 1000) -> None:
        if max_points < 4:
            raise ValueError("max_points must be at least 4")
        self.max_points = max_points
        self._max_buckets = (max_points - 2) // 2  # + first and last point
        self._buckets: list[_Bucket] = []
        self._width = 1
        self._first: Point | None = None
        self._last: Point | None = None
        self.count = 0

    @property
    def width(self) -> int:
        """How many appended points each full bucket summarises."""
        return self._width

    @property
    def last(self) -> Point | None:
        """The latest finite point appended; None before the first."""
        return self._last

    def append(self, x: float, y: float) -> None:
        """Add one point; ``x`` must not decrease. Non-finite ``y`` is ignored."""
        if not math.isfinite(y):
            return
        point = (float(x), float(y))
        self.count += 1
        self._last = point
        if self._first is None:
            self._first = point
        if self._buckets and self._buckets[-1].count < self._width:
            self._buckets[-1].add(point)
            return
        self._buckets.append(_Bucket(point))
        if len(self._buckets) > self._max_buckets:
            self._halve()

    def _halve(self) -> None:
        merged: list[_Bucket] = []
        for i in range(0, len(self._buckets), 2):
            bucket = self._buckets[i]
            if i + 1 < len(self._buckets):
                bucket.merge(self._buckets[i + 1])
            merged.append(bucket)
        self._buckets = merged
        self._width *= 2

    def points(self) -> tuple[list[float], list[float]]:
        """``(xs, ys)`` to draw: at most ``max_points`` points, in ``x`` order."""
        kept: list[Point] = []
        for bucket in self._buckets:
            kept.extend(bucket.points())
        if self._first is not None and (not kept or kept[0] != self._first):
            kept.insert(0, self._first)
        if self._last is not None and kept[-1] != self._last:
            kept.append(self._last)
        return [p[0] for p in kept], [p[1] for p in kept]

    def extremes(self) -> tuple[float, float] | None:
        """``(min y, max y)`` over every point appended, or None when empty."""
        if not self._buckets:
            return None
        return (
            min(b.low[1] for b in self._buckets),
            max(b.high[1] for b in self._buckets),
        )
