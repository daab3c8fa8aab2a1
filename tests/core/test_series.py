"""Bounded series: raw recent points, merged older points, bounded memory."""

from __future__ import annotations

import math

import pytest

from ludwig_nb.core.series import Series, SeriesTable


def test_points_under_capacity_are_kept_as_they_came() -> None:
    series = Series(capacity=8, factor=4, tiers=2)
    for t in range(5):
        series.append(float(t), t * 10.0)
    assert series.points() == [(float(t), t * 10.0) for t in range(5)]
    assert series.last() == (4.0, 40.0)


def test_overflow_merges_the_oldest_points_mean_and_peak() -> None:
    series = Series(capacity=8, factor=4, tiers=2)
    values = [1.0, 5.0, 3.0, 3.0] + [float(v) for v in range(10, 15)]
    for t, v in enumerate(values):
        series.append(float(t), v)
    # 9 points > capacity 8: the 4 oldest became one point (mean t 1.5, mean 3, max 5)
    assert series.points()[0] == (1.5, 3.0)
    assert series.peaks()[0] == (1.5, 5.0)
    assert series.points()[1:] == [(float(t), v) for t, v in enumerate(values)][4:]


def test_times_stay_ordered_across_tiers() -> None:
    series = Series(capacity=16, factor=4, tiers=3)
    for t in range(500):
        series.append(float(t), float(t % 7))
    times = [t for t, _ in series.points()]
    assert times == sorted(times)
    assert times[-1] == 499.0
    assert len(series) <= 3 * 16


def test_gaps_are_nan_and_merges_ignore_them() -> None:
    series = Series(capacity=4, factor=4, tiers=2)
    for t, v in enumerate([None, 2.0, None, 4.0, None, None, None, None, 1.0]):
        series.append(float(t), v)
    merged = series.points()
    assert merged[0][1] == 3.0  # mean of 2 and 4, the Nones skipped
    assert math.isnan(merged[1][1])  # four missing readings merge into a gap


def test_since_filters_by_time() -> None:
    series = Series(capacity=100)
    for t in range(10):
        series.append(float(t), 1.0)
    assert [t for t, _ in series.points(since=7.0)] == [7.0, 8.0, 9.0]


def test_a_day_at_one_hertz_fits_in_a_few_hundred_kilobytes() -> None:
    series = Series()
    for t in range(86_400):
        series.append(float(t), 50.0 + (t % 60))
    assert series.nbytes < 200_000
    points = series.points()
    assert points[0][0] < 600.0  # still reaches back to the start of the day
    assert points[-1] == (86_399.0, 50.0 + 86_399 % 60)


@pytest.mark.parametrize(("capacity", "factor", "tiers"), [(3, 4, 2), (8, 1, 2), (8, 4, 0)])
def test_bad_shapes_raise(capacity: int, factor: int, tiers: int) -> None:
    with pytest.raises(ValueError, match="factor"):
        Series(capacity, factor, tiers)


def test_series_table_creates_series_on_first_use() -> None:
    table = SeriesTable(capacity=8)
    table.append(("gpu0", "temperature"), 0.0, 40.0)
    table.append(("gpu0", "temperature"), 1.0, 41.0)
    table.append(("host", "cpu_percent"), 1.0, None)
    assert table.keys() == [("gpu0", "temperature"), ("host", "cpu_percent")]
    series = table.get(("gpu0", "temperature"))
    assert series is not None and series.points() == [(0.0, 40.0), (1.0, 41.0)]
    assert table.get(("gpu1", "temperature")) is None
    assert table.nbytes == 3 * 3 * 8
