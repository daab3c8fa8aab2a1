"""Throttled time per cause from counters, from flags, and from both."""

from __future__ import annotations

import pytest

from ludwig_nb.core.gpu_sample import GpuSample
from ludwig_nb.core.throttle_time import (
    ThrottleMeter,
    ThrottleTime,
    describe_throttle_time,
    throttle_time,
    worst_gpu,
)


def s(**kw: object) -> dict[str, object]:
    return {"clock_reasons": [], **kw}


def test_counters_are_differences_capped_by_the_interval() -> None:
    samples = [
        (0.0, s(throttled_power_s=100.0, throttled_thermal_s=50.0)),
        (2.0, s(throttled_power_s=101.0, throttled_thermal_s=50.5)),  # 1 + 0.5 in 2 s
        (3.0, s(throttled_power_s=102.0, throttled_thermal_s=51.5)),  # 1 + 1 in 1 s: capped
    ]
    figures = throttle_time(samples)
    assert figures is not None
    assert (figures.span_s, figures.total_s, figures.source) == (3.0, 2.5, "counters")
    assert figures.causes == {
        "thermal": 1.5,
        "power_cap": 2.0,
        "power_brake": 0.0,
        "sync_boost": 0.0,
    }


def test_hw_thermal_time_lies_within_sw_thermal_time() -> None:
    samples = [
        (0.0, s(throttled_thermal_s=0.0, throttled_hw_thermal_s=0.0)),
        (1.0, s(throttled_thermal_s=0.6, throttled_hw_thermal_s=0.3)),
    ]
    figures = throttle_time(samples)
    assert figures is not None and figures.causes["thermal"] == 0.6 and figures.total_s == 0.6


def test_flags_stand_for_the_interval_before_them_when_there_is_no_counter() -> None:
    samples = [
        (0.0, s(clock_reasons=["sw_thermal_slowdown"])),  # the first sample opens nothing
        (1.0, s(clock_reasons=["gpu_idle"])),
        (2.0, s(clock_reasons=["sw_power_cap", "sw_thermal_slowdown"])),
        (3.0, s(clock_reasons=["hw_power_brake_slowdown"])),
    ]
    figures = throttle_time(samples)
    assert figures is not None and figures.source == "flags"
    assert (figures.total_s, figures.span_s) == (2.0, 3.0)
    assert figures.causes["thermal"] == 1.0 and figures.causes["power_brake"] == 1.0


def test_a_missing_or_reset_counter_falls_back_to_the_flags_for_that_interval() -> None:
    samples = [
        (0.0, s(throttled_power_s=10.0)),
        (1.0, s(throttled_power_s=None, clock_reasons=["sw_power_cap"])),
        (2.0, s(throttled_power_s=0.2, clock_reasons=[])),  # the driver reloaded
        (3.0, s(throttled_power_s=0.7)),
    ]
    figures = throttle_time(samples)
    assert figures is not None and figures.source == "counters+flags"
    assert figures.total_s == pytest.approx(1.5)


def test_gpu_samples_work_as_well_as_their_dicts() -> None:
    a = GpuSample(index=0, throttled_power_s=1.0)
    b = GpuSample(index=0, throttled_power_s=1.25)
    assert throttle_time([(0.0, a), (1.0, b)]) == throttle_time(
        [(0.0, a.to_dict()), (1.0, b.to_dict())]
    )


def test_recent_share_looks_back_a_window() -> None:
    meter = ThrottleMeter(window_s=10.0)
    for t in range(31):
        meter.add(s(clock_reasons=["sw_thermal_slowdown"] if t > 20 else []), float(t))
    assert meter.recent_share() == pytest.approx(1.0)
    result = meter.result()
    assert result is not None and result.share == pytest.approx(10 / 30)
    assert ThrottleMeter().recent_share() is None and ThrottleMeter().result() is None


def test_words_and_the_worst_gpu() -> None:
    quiet = ThrottleTime(100.0, 0.0, {"thermal": 0.0}, "counters")
    hot = ThrottleTime(
        100.0, 7.0, {"thermal": 5.0, "power_cap": 2.2, "sync_boost": 0.1}, "counters"
    )
    assert describe_throttle_time(hot) == (
        "throttled 7 % of the run (thermal 5 %, power cap 2 %, sync boost <1 %)"
    )
    assert describe_throttle_time(quiet) == "not throttled"
    assert describe_throttle_time(None) == ""
    assert describe_throttle_time(hot, of="the last minute", gpu="GPU 1").startswith(
        "GPU 1 throttled 7 % of the last minute"
    )
    assert worst_gpu({"0": quiet, "1": hot, "2": None}) == ("1", hot)
    assert worst_gpu({"0": None}) is None
    assert ThrottleTime.from_dict(hot.to_dict()) == hot
