"""The profile's pure parts: phase timeline from events, summary figures, Ludwig's keys."""

from __future__ import annotations

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core import resource_profile as rp


def _events() -> list[ev.Event]:
    return [
        ev.PhaseChanged(time=0.0, phase="queued"),
        ev.PhaseChanged(time=1.0, phase="preprocessing"),
        ev.PhaseChanged(time=3.0, phase="training"),
        ev.PhaseChanged(time=10.0, phase="evaluating"),
        ev.EvaluationFinished(time=12.0, step=9, epoch=0, start_time=10.0, metrics={}),
        ev.CheckpointSaved(time=13.0, step=9, start_time=12.0, path="x"),
        ev.PhaseChanged(time=13.0, phase="training"),
        ev.Paused(time=15.0, step=12, reason="user"),
        ev.Resumed(time=17.0, step=12, paused_at=15.0),
        ev.RunFinished(time=20.0, status="completed", step=20),
    ]


def test_the_timeline_cuts_evaluations_and_checkpoints_into_the_phases() -> None:
    timeline = rp.phase_timeline(_events())
    assert timeline == [
        (0.0, 1.0, "queued"),
        (1.0, 3.0, "preprocessing"),
        (3.0, 10.0, "training"),
        (10.0, 12.0, "evaluation"),
        (12.0, 13.0, "checkpoint"),
        (13.0, 15.0, "training"),
        (15.0, 17.0, "paused"),
        (17.0, 20.0, "training"),
    ]
    assert rp.phase_at(timeline, 12.5) == "checkpoint"
    assert rp.phase_at(timeline, 16.0) == "paused"
    assert rp.phase_at(timeline, 25.0) == "other"


def test_summary_phase_seconds_and_rates() -> None:
    timeline = rp.phase_timeline(_events())
    steps = [(3.0 + i * 0.5, 3.5 + i * 0.5, 32) for i in range(24)]
    host = {
        "cpu_percent": 50.0,
        "memory_used": 4,
        "memory_total": 10,
        "process_cpu_percent": 20.0,
        "process_rss": 3,
    }
    samples = [{"time": float(t), "host": host, "gpus": []} for t in range(20)]
    summary = rp.summarize(samples, timeline, steps, interval=1.0)
    assert summary["phase_s"] == {
        "queued": 1.0,
        "preprocessing": 2.0,
        "training": 12.0,
        "evaluation": 2.0,
        "checkpoint": 1.0,
        "paused": 2.0,
    }
    assert summary["total_s"] == 20.0
    assert summary["steps_per_s"] == pytest.approx(2.0)  # 24 steps in 12 s of training
    assert summary["samples_per_s"] == pytest.approx(64.0)
    assert summary["host"]["peak_rss"] == 3 and summary["host"]["min_memory_available"] == 6
    assert summary["energy_j"] is None and summary["gpus"] == {}  # no GPU: absent, no error


def test_ludwig_keys_keep_ludwigs_names_with_bytes_for_gpu_memory() -> None:
    gpu = {"index": 0, "memory_used": 2 << 30}
    host = {
        "cpu_percent": 80.0,
        "memory_used": 6,
        "memory_total": 10,
        "process_cpu_percent": 25.0,
        "process_rss": 1000,
    }
    samples = [{"time": 0.0, "host": host, "gpus": [gpu]}]
    keys = rp.ludwig_keys(samples, "training", 2.5, {"num_cpu": 2})
    assert keys["code_block_tag"] == "training" and keys["num_cpu"] == 2
    assert keys["total_execution_time"] == 2.5e6  # µs, as LudwigProfiler writes it
    assert keys["max_cpu_memory_usage"] == 1000
    assert keys["min_global_cpu_memory_available"] == 4.0
    assert keys["cuda_0_max_memory_used"] == 2 << 30  # bytes, not MiB
    ludwig_names = {
        "code_block_tag",
        "cpu_name",
        "cpu_architecture",
        "num_cpu",
        "total_cpu_memory_size",
        "ludwig_version",
        "total_execution_time",
        "max_cpu_utilization",
        "average_cpu_utilization",
        "max_cpu_memory_usage",
        "average_cpu_memory_usage",
        "min_global_cpu_memory_available",
        "average_global_cpu_memory_available",
        "max_global_cpu_utilization",
        "average_global_cpu_utilization",
    }
    assert ludwig_names <= set(keys)
