"""RemoteSampler: snapshots fed from elsewhere, read like the sampler's own."""

from __future__ import annotations

from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.gpu.remote import WAITING_REASON, RemoteSampler


def test_fed_snapshots_are_the_latest_the_history_and_reach_subscribers():
    sampler = RemoteSampler(interval=1.0)
    assert sampler.latest() is None and not sampler.gpu_available
    assert sampler.reason == WAITING_REASON
    got: list[Snapshot] = []
    sampler.subscribe(got.append)
    for t, temp in ((1.0, 50.0), (2.0, 60.0)):
        sampler.feed(Snapshot(time=t, gpus=(GpuSample(index=0, temperature=temp, host="b"),)))
    assert [s.gpus[0].temperature for s in got] == [50.0, 60.0]
    assert sampler.gpu_available and sampler.reason == ""
    assert sampler.history("temperature", 0) == [(1.0, 50.0), (2.0, 60.0)]
    assert sampler.sample_once() is sampler.latest()
    sampler.start()  # no thread: nothing to start
    assert not sampler.running
    sampler.feed(Snapshot(time=3.0, reason="beta: no NVIDIA driver found"))
    assert sampler.reason == "beta: no NVIDIA driver found"
