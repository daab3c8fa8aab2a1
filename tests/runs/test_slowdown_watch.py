"""SlowdownWatch on the simulated GPU: throttled time per GPU, and when it starts to matter."""

from __future__ import annotations

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.gpu import SimulatedGpu, ThermalProfile
from ludwig_nb.runs.slowdown_watch import SlowdownWatch


class Target:
    def __init__(self, device_index: int | None = None) -> None:
        self.device_index = device_index
        self.events: list[ev.Event] = []

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)


class Sampler:
    def __init__(self) -> None:
        self.callbacks: list[object] = []

    def subscribe(self, callback: object) -> object:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)


def test_a_hot_card_is_reported_slowed_then_back_at_full_clocks() -> None:
    now, load = [0.0], [1.0]
    gpu = SimulatedGpu(
        load=lambda: load[0],
        profile=ThermalProfile.demo(),
        clock=lambda: now[0],
        wall_clock=lambda: now[0],
    )
    target, sampler = Target(), Sampler()
    watch = SlowdownWatch(sampler, target)  # type: ignore[arg-type]
    assert sampler.callbacks == [watch.on_snapshot]
    for second in range(240):
        now[0] = float(second)
        load[0] = 1.0 if second < 120 else 0.0
        watch.on_snapshot(Snapshot(time=now[0], gpus=tuple(gpu.sample())))
    slowdowns = [e for e in target.events if isinstance(e, ev.GpuSlowdown)]
    assert [e.active for e in slowdowns] == [True, False]
    up, down = slowdowns
    assert 20 <= up.time <= 40 and up.causes == ("thermal",)  # crosses 87 °C at ~12 s
    assert up.text.startswith("GPU 0 throttled") and "of the last minute (thermal" in up.text
    assert up.clock_ratio == pytest.approx(0.8)  # the simulated SW slowdown takes 20 % off
    assert down.time > 120 and down.text == "GPU 0 back to full clocks"
    assert down.clock_ratio is not None and down.clock_ratio < 0.5  # now idle clocks
    (figures,) = watch.figures().values()
    assert figures.source == "counters" and 0.35 < (figures.share or 0) < 0.5
    watch.close()
    assert sampler.callbacks == []


def test_only_the_run_s_gpu_and_never_a_mig_slice_or_a_lost_gpu() -> None:
    target = Target(device_index=1)
    watch = SlowdownWatch(None, target)  # type: ignore[arg-type]
    for t in range(100):
        hot = ("sw_thermal_slowdown",)
        gpus = (
            GpuSample(index=0, clock_reasons=hot),
            GpuSample(index=1, clock_reasons=()),
            GpuSample(index=1, mig_index=0, clock_reasons=hot),
            GpuSample(index=2, clock_reasons=hot, lost=True),
        )
        watch.on_snapshot(Snapshot(time=float(t), gpus=gpus))
    assert target.events == []
    assert list(watch.figures()) == [1] and watch.figures()[1].total_s == 0.0
