"""Throughput counts time inside steps only, over a sliding window of event time."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.ui.throughput import ThroughputMeter
from tests.ui.conftest import T0, steps


def test_rate_ignores_gaps_between_steps() -> None:
    meter = ThroughputMeter(window_s=100.0)
    assert meter.samples_per_s is None
    for event in steps(0, 10, T0, step_s=0.1):  # 32 samples per 0.1 s
        meter.observe(event)
    for event in steps(10, 10, T0 + 60.0, step_s=0.1):  # after a long evaluation pause
        meter.observe(event)
    assert meter.samples_per_s == 320.0
    assert meter.steps_per_s == 10.0


def test_window_forgets_old_steps() -> None:
    meter = ThroughputMeter(window_s=5.0)
    for event in steps(0, 10, T0, step_s=0.1):
        meter.observe(event)
    for event in steps(10, 10, T0 + 20.0, step_s=0.2):  # twice as slow now
        meter.observe(event)
    assert meter.samples_per_s == 160.0
    meter.observe(ev.Paused(time=T0 + 30, step=20))  # other events change nothing
    assert meter.samples_per_s == 160.0


def test_token_rates_count_real_and_padded_tokens_of_busy_time():
    from ludwig_nb.core import events as ev
    from ludwig_nb.ui.formatting import format_tokens_per_s
    from ludwig_nb.ui.throughput import ThroughputMeter

    meter = ThroughputMeter(window_s=100)
    assert meter.tokens_per_s is None
    for i in range(4):
        meter.observe(
            ev.StepFinished(
                time=float(i + 1),
                step=i,
                epoch=0,
                start_time=i + 0.5,
                batch_size=8,
                loss=1.0,
                tokens=100,
                padded_tokens=150,
            )
        )
    assert meter.tokens_per_s == (200.0, 300.0)  # 400 / 2 s busy, 600 / 2 s
    assert format_tokens_per_s(meter.tokens_per_s, meter.samples_per_s) == (
        "200 tokens/s (300 padded) · 16.0 samples/s"
    )
