import datetime as dt

import pytest

from ludwig_nb.core.eta.display import WARMING_UP, format_clock, format_duration, format_estimate
from ludwig_nb.core.eta.estimate import Estimate

UTC = dt.timezone.utc
# 2026-11-30 13:52:30 UTC
NOW = dt.datetime(2026, 11, 30, 13, 52, 30, tzinfo=UTC).timestamp()


def _estimate(remaining, low, high, state="stable"):
    return Estimate(remaining_s=remaining, low_s=low, high_s=high, state=state, at=NOW, step_s=1)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (-0.0, "0 s"),
        (-12.0, "0 s"),
        (float("nan"), "0 s"),
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


def test_the_dashboard_line():
    e = _estimate(750, 710, 800)
    text = format_estimate(e, NOW, tz=UTC)
    assert text == "≈ 12 min 30 s (11 min 50 s – 13 min 20 s) · done ≈ 14:05"


def test_warming_up_lines():
    assert format_estimate(None, NOW, tz=UTC) == WARMING_UP
    e = _estimate(600, 300, 900, state="warming_up")
    assert format_estimate(e, NOW, tz=UTC) == "warming up… ≈ 10 min"


def test_adjusting_and_collapsed_interval():
    e = _estimate(30, 30, 30, state="adjusting")
    assert format_estimate(e, NOW, tz=UTC) == "≈ 30 s · done ≈ 13:53 · adjusting…"


def test_negative_remaining_never_shows():
    e = _estimate(-5.0, -7.0, 0.0)
    text = format_estimate(e, NOW, tz=UTC)
    assert "-" not in text
    assert text.startswith("≈ 0 s")


def test_clock_names_the_day_when_not_today():
    tomorrow = NOW + 20 * 3600
    assert format_clock(tomorrow, NOW, tz=UTC) == "Tue 09:52"
    assert format_clock(NOW, NOW, tz=dt.timezone(dt.timedelta(hours=2))) == "15:52"
