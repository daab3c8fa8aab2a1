"""The simulated GPU: a first-order thermal model driven by load, on a virtual clock."""

from __future__ import annotations

import math

import pytest

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, parse_threshold
from ludwig_nb.gpu import SimulatedGpu, ThermalProfile


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_heats_under_load_as_a_first_order_system() -> None:
    clock, profile = Clock(), ThermalProfile(ambient=30.0, hot=90.0, heat_tau=60.0)
    gpu = SimulatedGpu(load=lambda: 1.0, profile=profile, clock=clock)
    gpu.sample()
    clock.now = 60.0  # one time constant
    (reading,) = gpu.sample()
    assert reading.temperature == pytest.approx(30.0 + 60.0 * (1 - math.exp(-1)), abs=0.05)
    assert reading.utilization_gpu == 100.0 and reading.pstate == 0
    assert reading.power_draw is not None and reading.power_limit is not None
    assert reading.power_draw <= reading.power_limit


def test_is_throttled_when_hot_and_idle_when_unloaded() -> None:
    clock, load = Clock(), [1.0]
    gpu = SimulatedGpu(load=lambda: load[0], clock=clock, count=2, start_temperature=80.0)
    gpu.sample()
    clock.now = 600.0
    hot = gpu.sample()
    assert len(hot) == 2 and [g.index for g in hot] == [0, 1]
    assert hot[0].temperature is not None and hot[0].temperature > ThermalProfile().slowdown
    assert "sw_thermal_slowdown" in hot[0].clock_reasons
    assert (hot[0].temperature_slowdown, hot[0].temperature_shutdown) == (87.0, 97.0)
    load[0] = 0.0
    clock.now = 6000.0
    (cool, _) = gpu.sample()
    assert cool.temperature == pytest.approx(ThermalProfile().ambient, abs=0.1)
    assert cool.clock_reasons == ("gpu_idle",) and cool.utilization_gpu == 0.0


def test_load_is_clipped_and_a_failing_load_counts_as_idle() -> None:
    assert SimulatedGpu(load=lambda: 7.0).load() == 1.0
    assert SimulatedGpu(load=lambda: -1.0).load() == 0.0
    assert SimulatedGpu(load=lambda: float("nan")).load() == 0.0

    def broken() -> float:
        raise RuntimeError("run handle gone")

    assert SimulatedGpu(load=broken).load() == 0.0
    with pytest.raises(ValueError, match="count"):
        SimulatedGpu(count=0)


def test_demo_profile_pauses_and_resumes_within_a_minute() -> None:
    clock, paused = Clock(), [False]
    gpu = SimulatedGpu(
        load=lambda: 0.0 if paused[0] else 1.0, profile=ThermalProfile.demo(), clock=clock
    )
    policy = AlarmPolicy([AlarmRule("temperature", parse_threshold("slowdown-5"), action="pause")])
    changes = []
    for second in range(61):
        clock.now = float(second)
        for change in policy.update(gpu.sample(), clock.now):
            paused[0] = change.raised
            changes.append((second, change.raised))
    assert changes[0][1] is True and changes[0][0] <= 30
    assert changes[1][1] is False and changes[1][0] - changes[0][0] <= 15
    assert len(changes) >= 3  # it heats up again after resuming: the cycle repeats


def test_thermal_counters_integrate_the_time_above_each_threshold_exactly() -> None:
    clock = Clock()
    profile = ThermalProfile(ambient=35.0, hot=95.0, heat_tau=120.0, slowdown=87.0)
    gpu = SimulatedGpu(load=lambda: 1.0, profile=profile, clock=clock, start_temperature=80.0)
    (first,) = gpu.sample()
    clock.now = 200.0
    (second,) = gpu.sample()
    # T(s) = 95 - 15 exp(-s / 120) crosses 87 at s = 120 ln(15 / 8) = 75 s
    crossing = 120.0 * math.log(15.0 / 8.0)
    assert first.throttled_thermal_s is not None and second.throttled_thermal_s is not None
    assert second.throttled_thermal_s - first.throttled_thermal_s == pytest.approx(200 - crossing)
    # the hardware point (max operating 89 °C) is crossed later: less time above it
    assert first.throttled_hw_thermal_s is not None and second.throttled_hw_thermal_s is not None
    hw = second.throttled_hw_thermal_s - first.throttled_hw_thermal_s
    assert hw == pytest.approx(200 - 120.0 * math.log(15.0 / 6.0))  # 89 °C at s = 110
    assert first.throttled_thermal_s == 3600.0  # a counter since "driver load", not 0


def test_cooling_counts_until_the_crossing() -> None:
    clock, load = Clock(), [0.0]
    gpu = SimulatedGpu(load=lambda: load[0], clock=clock, start_temperature=95.0)
    (first,) = gpu.sample()
    clock.now = 30.0
    (second,) = gpu.sample()
    p = ThermalProfile()  # cools toward 35 °C with tau 90: below 87 after 90 ln(60 / 52)
    assert second.throttled_thermal_s - first.throttled_thermal_s == pytest.approx(  # type: ignore[operator]
        90.0 * math.log(60.0 / 52.0)
    )
    assert second.temperature_margin == pytest.approx(p.slowdown - second.temperature, abs=0.11)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("generation", "counters", "gpm"),
    [("hopper", True, True), ("ampere", True, False), ("legacy", False, False)],
)
def test_each_generation_reports_what_its_cards_do(
    generation: str, counters: bool, gpm: bool
) -> None:
    gpu = SimulatedGpu(load=lambda: 1.0, profile=ThermalProfile(generation=generation))
    (reading,) = gpu.sample()
    assert (reading.throttled_thermal_s is not None) is counters
    assert (reading.throttled_power_brake_s is not None) is counters
    assert (reading.tensor_activity is not None) is gpm
    assert (reading.sm_activity is not None) is gpm
    assert reading.temperature_margin == pytest.approx(87.0 - 35.0)  # every card has thresholds
    with pytest.raises(ValueError, match="generation"):
        ThermalProfile(generation="volta")


def test_gpm_activity_follows_the_load() -> None:
    load = [0.5]
    gpu = SimulatedGpu(load=lambda: load[0])
    (half,) = gpu.sample()
    load[0] = 1.0
    (full,) = gpu.sample()
    assert half.sm_activity == 46.0 and full.sm_activity == 92.0
    assert half.tensor_activity is not None and full.tensor_activity == 2 * half.tensor_activity
