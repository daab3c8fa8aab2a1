"""Min/max-preserving downsampling keeps spikes and dips and bounds the point count."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludwig_nb.core.downsample import MinMaxSeries, downsample_minmax

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


def test_short_curve_is_returned_unchanged() -> None:
    xs, ys = downsample_minmax([0, 1, 2], [3.0, 1.0, 2.0], max_points=10)
    assert xs == [0, 1, 2]
    assert ys == [3.0, 1.0, 2.0]


def test_single_spike_survives_heavy_downsampling() -> None:
    ys = [1.0] * 100_000
    ys[54_321] = 50.0
    ys[77_777] = -3.0
    xs, out = downsample_minmax(range(len(ys)), ys, max_points=100)
    assert len(out) <= 100
    assert 50.0 in out and xs[out.index(50.0)] == 54_321
    assert -3.0 in out
    assert xs[0] == 0 and xs[-1] == 99_999


def test_nan_values_are_skipped() -> None:
    xs, ys = downsample_minmax([0, 1, 2, 3], [1.0, math.nan, math.inf, 2.0], max_points=4)
    assert xs == [0, 3]
    assert ys == [1.0, 2.0]


def test_invalid_arguments_raise() -> None:
    with pytest.raises(ValueError, match="same length"):
        downsample_minmax([1, 2], [1.0], 10)
    with pytest.raises(ValueError, match="at least 4"):
        downsample_minmax([1], [1.0], 3)
    with pytest.raises(ValueError, match="at least 4"):
        MinMaxSeries(2)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=400), st.integers(min_value=4, max_value=50))
def test_downsample_bounds_and_keeps_extremes(ys: list[float], max_points: int) -> None:
    xs = list(range(len(ys)))
    out_x, out_y = downsample_minmax(xs, ys, max_points)
    assert len(out_y) <= max_points
    assert min(out_y) == min(ys) and max(out_y) == max(ys)
    assert out_x == sorted(out_x)
    assert out_x[0] == 0 and out_x[-1] == len(ys) - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=600), st.integers(min_value=4, max_value=40))
def test_series_bounds_and_keeps_extremes(ys: list[float], max_points: int) -> None:
    series = MinMaxSeries(max_points)
    for i, y in enumerate(ys):
        series.append(i, y)
    xs, out = series.points()
    assert len(out) <= max_points
    assert min(out) == min(ys) and max(out) == max(ys)
    assert xs == sorted(xs)
    assert (xs[0], out[0]) == (0, ys[0])
    assert (xs[-1], out[-1]) == (len(ys) - 1, ys[-1])
    assert series.count == len(ys)


def test_million_step_series_stays_small() -> None:
    rng = random.Random(7)
    series = MinMaxSeries(max_points=500)
    worst = (-1.0, 0)
    for step in range(1_000_000):
        loss = 2.0 * math.exp(-step / 200_000) + rng.random() * 0.01
        if step == 612_345:
            loss = 9.0  # a divergence spike must stay visible
            worst = (loss, step)
        series.append(step, loss)
    xs, ys = series.points()
    assert len(ys) <= 500
    assert (float(worst[1]), worst[0]) in zip(xs, ys, strict=True)
    assert series.width >= 1_000_000 // 500
    assert xs[-1] == 999_999


def test_empty_series() -> None:
    series = MinMaxSeries(10)
    assert series.points() == ([], [])
    assert series.last is None
