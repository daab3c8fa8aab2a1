import datetime as dt

from ludwig_nb.core.early_stop import StopForecast, format_forecast
from ludwig_nb.core.eta.display import WARMING_UP, eta_sentence, format_estimate
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


def test_a_bound_reads_at_most_never_at_most_about():
    """Under early stopping the total is a bound: "≤", and "warming up… ≤", never "≤ ≈"."""
    e = _estimate(750, 710, 800)
    assert format_estimate(e, NOW, tz=UTC, bound=True) == (
        "≤ 12 min 30 s (11 min 50 s – 13 min 20 s) · done ≈ 14:05"
    )
    warm = _estimate(19, 10, 30, state="warming_up")
    assert format_estimate(warm, NOW, tz=UTC, bound=True) == "warming up… ≤ 19 s"
    assert format_estimate(None, NOW, tz=UTC, bound=True) == WARMING_UP


def test_the_sentence_is_the_bound_then_the_forecast():
    e = _estimate(750, 710, 800)
    assert eta_sentence(e, None, NOW, tz=UTC) == format_estimate(e, NOW, tz=UTC)
    forecast = StopForecast(step=2900, earliest=2400, latest=11000, remaining_s=45.0)
    text = eta_sentence(e, forecast, NOW, bounded_total=11000, tz=UTC)
    assert text == (
        "≤ 12 min 30 s (11 min 50 s – 13 min 20 s) · done ≈ 14:05 · at most 11,000 steps"
        " (early stopping); likely stops near step 2,900 (not before 2,400), ≈ 45 s from now"
    )
    assert text.endswith(format_forecast(forecast, 11000))
