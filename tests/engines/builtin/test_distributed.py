"""The built-in loop as ranks of a data-parallel run, without Ray: two processes with a
gloo process group run the real ``Training`` with ``Distributed`` (DDP, sharded batch
order) and the Ray engine's ``WorkerControl`` (stop/pause agreed by ``all_reduce``).
This is the per-worker half of engine: ray; tests/engines/ray runs it under Ray Train."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import torch

from ludwig_nb.engines.builtin.distributed import SINGLE, shard_order, shard_rows


def test_shards_are_disjoint_equal_and_cover_all_but_the_remainder():
    order = torch.randperm(103, generator=torch.Generator().manual_seed(0))
    shards = [shard_order(order, rank, 4) for rank in range(4)]
    assert {len(s) for s in shards} == {shard_rows(103, 4)} == {25}
    flat = torch.cat(shards).tolist()
    assert len(set(flat)) == 100  # disjoint
    assert set(flat) <= set(order.tolist())
    assert SINGLE.shard(order) is order
    assert shard_rows(1, 8) == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rank(rank: int, world: int, port: int, out: str, stop_after: int | None, duty: float) -> None:
    import faulthandler
    import gc
    import os
    import sys

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from ludwig_nb.core import events as ev
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin.distributed import Distributed
    from ludwig_nb.engines.builtin.trainer import Training
    from ludwig_nb.engines.ray.worker import parameters_digest
    from ludwig_nb.engines.ray.worker_control import WorkerControl, torch_agree
    from tests.engines.builtin.conftest import make_config, table

    faulthandler.enable()  # a C++ abort in a rank prints its Python stacks
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    steps: list[int] = []
    asked = {"stop": None}

    def emit(event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            steps.append(event.step)
            if stop_after is not None and event.step == stop_after and rank == 0:
                asked["stop"] = "user"  # only rank 0 hears the Stop, as on Ray

    heard = duty if rank == 0 else 1.0  # only rank 0 reads the throttle's duty, as on Ray
    control = WorkerControl(
        lambda: (asked["stop"], None, heard),
        lambda t: (asked["stop"], None, heard),
        torch_agree(torch.device("cpu")),
    )
    config = make_config(
        [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        [{"name": "label", "type": "binary"}],
        epochs=3,
    )
    job = TrainJob(
        config=config,
        dataset=table(rows=160),
        run_dir=Path(out) / f"rank{rank}",
        run_id="r",
        name="t",
    )
    training = Training(
        job,
        emit,
        control,
        distributed=Distributed(rank=rank, world_size=world, wrap_module=DistributedDataParallel),
    )
    model = training.run()
    (Path(out) / f"rank{rank}.json").write_text(
        json.dumps(
            {
                "steps": steps,
                "total": training.s.plan.total_steps,
                "digest": parameters_digest(model.module),
                "idle": control.idle_seconds,
                "duty": control.duty,
            }
        )
    )
    # DDP's reducer holds gloo work (tensors) until it is freed: freed at interpreter exit, a
    # gloo thread then takes the GIL of a finalizing interpreter and the rank dies of SIGABRT
    # ("terminate called without an active exception", once in CI). Free it while alive.
    # (and the rank then skips finalization altogether: this test is about the ranks' steps)
    del training, model
    gc.collect()
    dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _spawn(tmp_path: Path, stop_after: int | None, duty: float = 1.0) -> list[dict]:
    import torch.multiprocessing as mp

    mp.spawn(_rank, args=(2, _free_port(), str(tmp_path), stop_after, duty), nprocs=2, join=True)
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]


@pytest.mark.timeout(300)
def test_two_ranks_take_the_same_steps_and_end_with_identical_parameters(tmp_path):
    """Throttled to half speed by a duty only rank 0 heard: both ranks idle (agreed)."""
    ranks = _spawn(tmp_path, stop_after=None, duty=0.5)
    # 112 training rows (70% of 160) -> 56 a rank -> 4 steps of 16 an epoch, 3 epochs
    assert ranks[0]["total"] == ranks[1]["total"] == 12
    assert ranks[0]["steps"] == ranks[1]["steps"] == list(range(12))
    assert ranks[0]["digest"] == ranks[1]["digest"]
    assert ranks[0]["duty"] == ranks[1]["duty"] == 0.5
    assert ranks[0]["idle"] > 0 and ranks[1]["idle"] > 0


@pytest.mark.timeout(300)
def test_a_stop_heard_by_rank_0_stops_both_ranks_before_the_same_step(tmp_path):
    ranks = _spawn(tmp_path, stop_after=4)
    assert ranks[0]["steps"] == ranks[1]["steps"]
    assert ranks[0]["steps"][-1] in (4, 5)  # the boundary after the request, on both
    assert ranks[0]["digest"] == ranks[1]["digest"]
