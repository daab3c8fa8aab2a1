"""WorkersView: the ranks' heartbeats -> the run's GPUs (host-tagged, run-wide numbers, only
the GPUs the run uses) and the workers row."""

from __future__ import annotations

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.engines.ray.gpu_view import WorkersView


def node(t: float, *temps: float, uuid: str = "GPU-a") -> dict:
    gpus = tuple(
        GpuSample(index=i, uuid=f"{uuid}{i}", temperature=c, time=t) for i, c in enumerate(temps)
    )
    return Snapshot(time=t, gpus=gpus, host=HostSample(time=t, cpu_percent=5.0)).to_dict()


def beat(rank, node_id, host="box", gpu=None, snapshot=None, steps=0, t=10.0, uuid=None, **more):
    return {
        "rank": rank,
        "node_id": node_id,
        "host": host,
        "device": "cuda:0" if gpu is not None or uuid else "cpu",
        "gpu": gpu,
        "gpu_uuid": uuid,
        "steps": steps,
        "time": t,
        "snapshot": snapshot,
        **more,
    }


def test_each_gpu_a_rank_uses_is_tagged_with_its_host_and_numbered_run_wide():
    view = WorkersView()
    beats = [
        beat(0, "n1", "alpha", gpu=1, snapshot=node(1.0, 40, 70)),
        beat(1, "n2", "beta", gpu=0, snapshot=node(1.0, 80, 30, uuid="GPU-b")),
        beat(2, "n2", "beta", uuid="GPU-b1"),  # a rank naming its GPU by UUID
    ]
    snap = view.snapshot(beats, now=100.0)
    assert snap is not None and snap.time == 100.0
    seen = [(g.index, g.host, g.host_index, g.temperature) for g in snap.gpus]
    # alpha's GPU 0 is nobody's; beta's two are ranks 1's and 2's
    assert seen == [(0, "alpha", 1, 70), (1, "beta", 0, 80), (2, "beta", 1, 30)]
    assert [g.label for g in snap.gpus] == ["GPU 1 on alpha", "GPU 0 on beta", "GPU 1 on beta"]
    assert snap.host is not None and snap.host.cpu_percent == 5.0
    # the numbers stay: a later reading keeps alpha's GPU as 0
    again = view.snapshot([beat(0, "n1", "alpha", gpu=1, snapshot=node(2.0, 41, 75))], 101.0)
    assert again is not None and [(g.index, g.temperature) for g in again.gpus] == [(0, 75)]
    assert view.snapshot([beat(0, "n1", "alpha", gpu=1, snapshot=node(2.0, 41, 75))], 102.0) is None


def test_a_node_whose_ranks_train_on_cpu_counts_all_its_gpus_and_names_share_a_host():
    view = WorkersView()
    snap = view.snapshot(
        [
            beat(0, "aaaaaaaa11", snapshot=node(1.0, 50, 60)),
            beat(1, "bbbbbbbb22", snapshot=node(1.0, 90)),
        ],
        now=5.0,
    )
    assert snap is not None
    assert [(g.host, g.host_index) for g in snap.gpus] == [
        ("box#aaaaaa", 0),
        ("box#aaaaaa", 1),
        ("box#bbbbbb", 0),
    ]


def test_without_gpus_the_reason_names_the_node():
    view = WorkersView()
    empty = Snapshot(time=1.0, reason="no NVIDIA driver found").to_dict()
    snap = view.snapshot([beat(0, "n1", "alpha", snapshot=empty)], now=2.0)
    assert snap is not None and snap.gpus == ()
    assert snap.reason == "alpha: no NVIDIA driver found"


def test_the_workers_row_changes_only_when_a_rank_does():
    view = WorkersView()
    view.snapshot([beat(0, "n1", "alpha", gpu=0, snapshot=node(1.0, 40))], now=1.0)
    beats = [
        beat(0, "n1", "alpha", gpu=0, steps=5, steps_per_s=2.5, t=9.0),
        beat(1, "n2", "beta", steps=4, t=8.0, idle_s=1.25),
    ]
    row = view.workers(beats, now=10.0)
    assert row is not None
    assert [(w["rank"], w["host"], w["gpu"], w["steps"], w["age_s"]) for w in row] == [
        (0, "alpha", 0, 5, 1.0),
        (1, "beta", None, 4, 2.0),
    ]
    assert row[1]["idle_s"] == 1.25 and row[0]["steps_per_s"] == 2.5
    assert view.workers(beats, now=11.0) is None  # only the age moved
    beats[1] = {**beats[1], "steps": 5}
    assert view.workers(beats, now=11.0) is not None
