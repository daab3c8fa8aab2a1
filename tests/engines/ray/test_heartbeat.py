"""A rank's heartbeat: step counting and rate (event times), the physical GPU from
CUDA_VISIBLE_DEVICES, the report with its node's snapshot."""

from __future__ import annotations

import types

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.engines.ray.heartbeat import Heartbeat, StepCounter, physical_gpu


def step(n: int, t: float) -> ev.StepFinished:
    return ev.StepFinished(
        time=t, step=n, epoch=0, start_time=t, batch_size=4, loss=1.0, learning_rate=0.1
    )


def test_the_counter_forwards_every_event_and_measures_the_recent_rate():
    seen: list = []
    counter = StepCounter(seen.append)
    counter(ev.PhaseChanged(time=0.0, phase="training"))
    assert counter.rate(0.0) is None
    for n in range(5):
        counter(step(n, 10.0 + 0.5 * n))
    assert len(seen) == 6 and counter.steps == 5
    assert counter.rate(12.1) == 2.0  # a step every 0.5 s
    assert counter.rate(20.0) == 0.0  # nothing for 8 s: stalled (paused, or waiting)


def test_the_physical_gpu_is_found_inside_cuda_visible_devices():
    cuda = types.SimpleNamespace(type="cuda", index=1)
    assert physical_gpu(cuda, "3,5") == 5
    assert physical_gpu(cuda, "GPU-aa,GPU-bb") == "GPU-bb"
    assert physical_gpu(cuda, None) == 1  # every GPU visible
    assert physical_gpu(types.SimpleNamespace(type="cpu", index=None), "0") is None


def test_a_report_carries_the_rank_the_steps_and_the_node_s_snapshot():
    pushed: list[dict] = []
    counter = StepCounter(lambda e: None)
    counter(step(0, 1.0))
    counter(step(1, 2.0))
    snapshot = Snapshot(time=2.0, gpus=(GpuSample(index=0, temperature=55.0),))
    beat = Heartbeat(
        pushed.append,
        {"rank": 1, "host": "h"},
        counter,
        lambda: snapshot,
        idle=lambda: 0.5,
        clock=lambda: 2.5,
    )
    beat.beat()
    report = pushed[-1]
    assert (report["rank"], report["steps"], report["steps_per_s"], report["idle_s"]) == (
        1,
        2,
        1.0,
        0.5,
    )
    assert Snapshot.from_dict(report["snapshot"]) == snapshot
    silent = Heartbeat(pushed.append, {"rank": 2}, counter, None, idle=lambda: 0.0)
    silent.beat()
    assert "snapshot" not in pushed[-1]  # not this node's reader


def test_a_failing_push_never_reaches_the_training_loop():
    def broken(report):
        raise ConnectionError("actor gone")

    beat = Heartbeat(broken, {"rank": 0}, StepCounter(lambda e: None), None, idle=lambda: 0.0)
    beat.beat()
    assert beat.sent == 0
