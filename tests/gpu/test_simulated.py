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
