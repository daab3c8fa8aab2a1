"""The sampler: fixed-rate deadlines on an injected clock, latest slot, history, subscribers."""

from __future__ import annotations

import logging
import math
import threading

import pytest

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.gpu import Sampler
from ludwig_nb.gpu.sampler import _next_deadline


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ScriptedSource:
    """A GPU source whose reads take ``costs[i]`` seconds of the fake clock."""

    def __init__(
        self, clock: FakeClock, costs: list[float] | None = None, fail: bool = False
    ) -> None:
        self.clock, self.costs, self.fail = clock, list(costs or []), fail
        self.reads = 0
        self.available, self.reason = True, ""

    def sample(self) -> list[GpuSample]:
        if self.fail:
            raise RuntimeError("driver exploded")
        cost = self.costs[self.reads] if self.reads < len(self.costs) else 0.0
        self.reads += 1
        self.clock.now += cost
        temp = None if self.reads == 2 else 40.0 + self.reads
        return [
            GpuSample(index=0, temperature=temp),
            GpuSample(index=0, mig_index=0, memory_used=5),
        ]

    def close(self) -> None:
        pass


class FakeHost:
    def sample(self) -> HostSample:
        return HostSample(time=0.0, cpu_percent=12.5, memory_used=1, memory_total=4)


def snapshot_times(sampler: Sampler, ticks: int) -> list[float]:
    times: list[float] = []
    sampler.subscribe(lambda snap: times.append(snap.time))
    sampler.run(ticks=ticks)
    return times


def test_ticks_keep_their_phase_when_reads_are_slow() -> None:
    clock = FakeClock()
    sampler = Sampler(
        ScriptedSource(clock, costs=[0.3, 0.3, 0.3, 0.3]), clock=clock, sleep=clock.sleep
    )
    assert snapshot_times(sampler, 4) == [0.0, 1.0, 2.0, 3.0]
    assert clock.sleeps == pytest.approx([0.7, 0.7, 0.7])


def test_missed_ticks_are_skipped_not_burst() -> None:
    clock = FakeClock()
    sampler = Sampler(
        ScriptedSource(clock, costs=[0.0, 2.5, 0.0, 0.0]), clock=clock, sleep=clock.sleep
    )
    # the read at 1.0 ends at 3.5: ticks 2.0 and 3.0 are skipped, the grid is kept
    assert snapshot_times(sampler, 4) == [0.0, 1.0, 4.0, 5.0]


def test_next_deadline() -> None:
    assert _next_deadline(0.0, 1.0, 0.2) == 1.0
    assert _next_deadline(0.0, 1.0, 1.0) == 2.0
    assert _next_deadline(10.0, 0.5, 12.1) == 12.5


def test_interval_is_validated() -> None:
    with pytest.raises(ValueError, match=r"at least 0\.25 s"):
        Sampler(None, interval=0.1)
    sampler = Sampler(None, interval=0.25)
    sampler.interval = 2.0
    assert sampler.interval == 2.0
    with pytest.raises(ValueError, match="at least"):
        sampler.interval = 0.0


def test_latest_slot_and_history() -> None:
    clock = FakeClock()
    sampler = Sampler(ScriptedSource(clock), FakeHost(), clock=clock, sleep=clock.sleep)
    assert sampler.latest() is None
    sampler.run(ticks=3)
    latest = sampler.latest()
    assert isinstance(latest, Snapshot) and latest.time == 2.0 and latest.reason == ""
    assert latest.host is not None and latest.host.cpu_percent == 12.5
    temps = sampler.history("temperature", 0)
    assert [t for t, _ in temps] == [0.0, 1.0, 2.0]
    assert temps[0][1] == 41.0 and math.isnan(temps[1][1]) and temps[2][1] == 43.0
    assert sampler.history("cpu_percent") == [(0.0, 12.5), (1.0, 12.5), (2.0, 12.5)]
    assert sampler.history("memory_percent", since=2.0) == [(2.0, 25.0)]
    assert sampler.history("temperature", device=7) == []
    assert sampler.history_nbytes > 0


def test_subscribers_are_called_unsubscribed_and_isolated(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    sampler = Sampler(ScriptedSource(clock), clock=clock, sleep=clock.sleep)
    seen: list[float] = []

    def broken(snapshot: Snapshot) -> None:
        raise ValueError("bad view")

    sampler.subscribe(broken)
    unsubscribe = sampler.subscribe(lambda snap: seen.append(snap.time))
    with caplog.at_level(logging.ERROR):
        sampler.run(ticks=3)
    assert seen == [0.0, 1.0, 2.0]  # the broken subscriber did not stop the others
    assert sum("subscriber failed" in r.message for r in caplog.records) == 1  # logged once
    unsubscribe()
    sampler.sample_once()
    assert seen == [0.0, 1.0, 2.0]


def test_a_failing_or_missing_source_gives_a_reason() -> None:
    clock = FakeClock()
    broken = Sampler(ScriptedSource(clock, fail=True), FakeHost(), clock=clock)
    snap = broken.sample_once()
    assert snap.gpus == () and snap.reason == "GPU sampling failed: driver exploded"
    assert snap.host is not None
    host_only = Sampler(None, FakeHost(), clock=clock)
    assert host_only.sample_once().reason == "no GPU source"
    assert not host_only.gpu_available and host_only.reason == "no GPU source"


def test_thread_starts_samples_and_stops() -> None:
    clock = FakeClock()
    sampler = Sampler(ScriptedSource(clock), FakeHost(), interval=0.25)
    ticked = threading.Event()
    sampler.subscribe(lambda snap: ticked.set())
    assert not sampler.running  # no thread until start()
    sampler.start()
    try:
        assert ticked.wait(5.0)
        assert sampler.running
    finally:
        sampler.stop()
    assert not sampler.running
    assert sampler.ticks >= 1


def test_gpm_history_only_for_gpus_that_report_it_and_its_gaps_after() -> None:
    class Gpm:
        available, reason = True, ""

        def __init__(self) -> None:
            self.reads = 0

        def sample(self) -> list[GpuSample]:
            self.reads += 1
            sm = None if self.reads in (1, 3) else 80.0  # none yet, then a failed read
            return [GpuSample(index=0, sm_activity=sm), GpuSample(index=1, sm_activity=None)]

        def close(self) -> None:
            pass

    clock = FakeClock()
    sampler = Sampler(Gpm(), None, clock=clock, sleep=clock.sleep)
    sampler.run(ticks=4)
    hopper = sampler.history("sm_activity", 0)
    assert [t for t, _ in hopper] == [1.0, 2.0, 3.0]  # from its first reading on
    assert hopper[0][1] == 80.0 and math.isnan(hopper[1][1])  # a gap once it had a series
    assert sampler.history("sm_activity", 1) == []  # an older GPU: no series of gaps
