"""The %gpu_watch view: batched writes only on new snapshots, no-GPU line, alarm log."""

from __future__ import annotations

from typing import Any

import pytest

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, parse_threshold
from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.gpu import Sampler, SimulatedGpu, ThermalProfile
from ludwig_nb.runs.alarm_watch import AlarmWatch
from ludwig_nb.ui import gpu_watch_view
from ludwig_nb.ui.gpu_watch_view import GpuWatchView
from ludwig_nb.ui.pump import Pump


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeHost:
    def sample(self) -> HostSample:
        return HostSample(time=0.0, cpu_percent=10.0, memory_used=1 << 30, memory_total=4 << 30)


@pytest.fixture
def applied(monkeypatch: pytest.MonkeyPatch) -> list[dict[Any, dict[str, Any]]]:
    """Every batch of writes the view applies (one per frame)."""
    batches: list[dict[Any, dict[str, Any]]] = []
    real = gpu_watch_view._apply

    def spy(writes: dict[Any, dict[str, Any]]) -> None:
        batches.append(writes)
        real(writes)

    monkeypatch.setattr(gpu_watch_view, "_apply", spy)
    return batches


def simulated(clock: Clock, count: int = 2) -> Sampler:
    gpu = SimulatedGpu(load=lambda: 1.0, count=count, profile=ThermalProfile.demo(), clock=clock)
    return Sampler(gpu, FakeHost(), clock=clock)


def test_writes_once_per_new_snapshot_however_many_frames(applied: list[Any]) -> None:
    clock = Clock()
    sampler = simulated(clock)
    view = GpuWatchView(sampler, history=60.0)
    view.refresh(0.0)
    assert applied == [{}]  # nothing sampled yet: nothing written
    sampler.sample_once()
    view.refresh(0.25)
    view.refresh(0.5)  # same snapshot: no writes
    first, second = applied[1:]
    assert second == {}
    widgets_written = list(first)
    assert view.header in widgets_written and view.host in widgets_written
    assert len(view.gpu_box.children) == 2
    for t in range(1, 30):  # 29 samples between two frames are one batch, each widget once
        clock.now = float(t)
        sampler.sample_once()
    view._timelines[0]._drawn_at = None  # its redraw limit is wall time: lift it here
    view.refresh(1.0)
    last = applied[-1]
    svg = last[view._timelines[0].figure]["value"]
    assert svg.count("<polyline") == 5  # utilisation, memory, SM, tensor (GPM), temperature
    assert ">-30 s<" in svg and ">now<" in svg  # 29 s of data: a 30 s window
    assert 'class="lnb-threshold-label"' in svg and "slowdown 87 °C" in svg
    assert "°C" in view._cards[(0, None)].value


def test_no_gpu_shows_the_reason_and_the_host(applied: list[Any]) -> None:
    view = GpuWatchView(Sampler(None, FakeHost(), clock=Clock()))
    view.sampler.sample_once()  # type: ignore[attr-defined]
    view.refresh(0.0)
    assert "no GPU source" in view.host.value and "CPU 10 %" in view.host.value
    assert view.gpu_box.children == ()


def test_devices_filter_and_lost_gpu() -> None:
    class Fixed:
        def latest(self) -> Snapshot:
            return Snapshot(
                time=1.0, gpus=(GpuSample(index=0, temperature=50.0), GpuSample(index=1, lost=True))
            )

        def history_columns(
            self, metric: str, device: int | None = None, since: float | None = None
        ) -> tuple[list[float], list[float]]:
            return [], []

    only_lost = GpuWatchView(Fixed(), devices=[1])
    only_lost.refresh(0.0)
    assert list(only_lost._cards) == [(1, None)]
    assert "lost" in only_lost._cards[(1, None)].value


def test_alarm_log_newest_first_and_close_runs_cleanup_once() -> None:
    clock = Clock()
    sampler = simulated(clock, count=1)
    rule = AlarmRule("temperature", parse_threshold("slowdown-5"), consecutive=1)
    watch = AlarmWatch(sampler, AlarmPolicy([rule]), list, clock=clock).start()
    closed: list[int] = []
    view = GpuWatchView(sampler, alarms=watch, on_close=lambda: closed.append(1))
    for t in range(40):
        clock.now = float(t)
        sampler.sample_once()
    view.refresh(0.0)
    assert "GPU 0 at 8" in view.alarm_log.value and "warn" in view.alarm_log.value
    pump = Pump(clock=clock)
    pump.add(view)
    view.close()
    view.close()
    pump.frame()
    assert closed == [1] and view.closed and pump.views == []
