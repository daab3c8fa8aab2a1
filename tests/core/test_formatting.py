"""The one formatter of each kind: durations, clock times, byte counts."""

import datetime as dt

import pytest

from ludwig_nb.core.formatting import (
    UNKNOWN,
    format_bytes,
    format_clock,
    format_duration,
    format_duration_fine,
)

UTC = dt.timezone.utc
# 2026-11-30 13:52:30 UTC
NOW = dt.datetime(2026, 11, 30, 13, 52, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (-0.0, "0 s"),
        (-12.0, "0 s"),
        (float("nan"), "–"),
        (None, "–"),
        (float("inf"), "∞"),
        (90_000, "1 d 1 h"),
        (0.4, "0 s"),
        (44.6, "45 s"),
        (59.6, "1 min"),
        (205, "3 min 25 s"),
        (207, "3 min 25 s"),
        (750, "12 min 30 s"),
        (754, "12 min 30 s"),
        (3599, "1 h"),
        (4800, "1 h 20 min"),
        (4829, "1 h 20 min"),
        (37_000, "10 h 20 min"),
        (200_000, "2 d 8 h"),
    ],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_never_negative():
    for s in (-1e9, -1.0, -0.5, -1e-12):
        assert "-" not in format_duration(s)


def test_clock_names_the_day_when_not_today():
    tomorrow = NOW + 20 * 3600
    assert format_clock(tomorrow, NOW, tz=UTC) == "Tue 09:52"
    assert format_clock(NOW, NOW, tz=dt.timezone(dt.timedelta(hours=2))) == "15:52"


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (None, "N/A"),
        (0, "0 B"),
        (512, "512 B"),
        (2048, "2.0 KiB"),
        (10.2 * 2**30, "10.2 GiB"),
        (3 * 2**40, "3.0 TiB"),
    ],
)
def test_format_bytes(count, text):
    assert format_bytes(count) == text


def test_unknown_is_not_zero():
    assert format_duration(0) != UNKNOWN and format_duration(None) == UNKNOWN


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.04, "0.0 s"),
        (0.26, "0.3 s"),
        (4.64, "4.6 s"),
        (9.9, "9.9 s"),
        (9.96, "10 s"),
        (75, "1 min 15 s"),
        (0, "0 s"),
        (None, UNKNOWN),
    ],
)
def test_format_duration_fine_reads_tenths_under_ten_seconds(seconds, text):
    assert format_duration_fine(seconds) == text
