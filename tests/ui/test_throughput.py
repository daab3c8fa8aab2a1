"""Throughput counts time inside steps only, over a sliding window of event time."""

from __future__ import annotations

import pytest

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


def test_data_wait_share_and_unit() -> None:
    from ludwig_nb.core.events import ScheduleInfo

    meter = ThroughputMeter(window_s=100.0)
    assert meter.data_wait_share is None and meter.unit == "samples"
    meter.observe(
        ev.RunStarted(
            time=0.0,
            run_id="r",
            name="n",
            engine="builtin",
            device="cpu",
            schedule=ScheduleInfo(10, 10, 1),
            sample_unit="images",
        )
    )
    for i, wait in enumerate((0.1, 0.3)):
        meter.observe(
            ev.StepFinished(
                time=float(i + 1),
                step=i,
                epoch=0,
                start_time=float(i),
                batch_size=8,
                loss=1.0,
                data_wait=wait,
            )
        )
    assert meter.unit == "images"
    assert meter.data_wait_share == pytest.approx(0.2)  # 0.4 s of 2 s
    assert meter.samples_per_s == pytest.approx(8.0)
