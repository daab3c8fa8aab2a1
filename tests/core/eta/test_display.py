import datetime as dt

from ludwig_nb.core.eta.display import WARMING_UP, format_estimate
from ludwig_nb.core.eta.plan import Estimate

UTC = dt.timezone.utc
# 2026-11-30 13:52:30 UTC
NOW = dt.datetime(2026, 11, 30, 13, 52, 30, tzinfo=UTC).timestamp()


def _estimate(remaining, low, high, state="stable"):
    return Estimate(remaining_s=remaining, low_s=low, high_s=high, state=state, at=NOW, step_s=1)


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
