"""What each Ray Train worker runs: the built-in engine's own training loop, as one rank.

:func:`train_loop_per_worker` is handed to ``TorchTrainer``. Rank 0 writes the run
directory and emits the events (batched into the channel); the other ranks train into a
scratch directory and emit nothing. The model is wrapped in ``DistributedDataParallel``
when there is more than one rank, and each rank takes its shard of the batch order.
A worker's prints and log records go to ``<run dir>/workers/rank-<r>.log``, not the cell.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from ludwig_nb.engines.base import TrainJob
from ludwig_nb.engines.builtin.distributed import Distributed
from ludwig_nb.engines.ray.channel import ChannelClient, EventBatcher
from ludwig_nb.engines.ray.data import read_on_worker
from ludwig_nb.engines.ray.heartbeat import Heartbeat, StepCounter, identity, node_reader
from ludwig_nb.engines.ray.process_log import log_to_file
from ludwig_nb.engines.ray.worker_control import WorkerControl, torch_agree

__all__ = ["WORKER_LOGS", "parameters_digest", "train_loop_per_worker"]

WORKER_LOGS = "workers"  # <run dir>/workers/rank-<r>.log


def _device(use_gpu: bool) -> Any:
    import torch

    if use_gpu:
        import ray.train.torch

        return ray.train.torch.get_device()
    return torch.device("cpu")


def _wrap_ddp(device: Any) -> Any:
    from torch.nn.parallel import DistributedDataParallel

    def wrap(module: Any) -> Any:
        ids = [device.index] if getattr(device, "type", "cpu") == "cuda" else None
        return DistributedDataParallel(module, device_ids=ids)

    return wrap


def train_loop_per_worker(loop: dict[str, Any]) -> None:
    """One rank of the run described by ``loop`` (built by engine.py).

    Raises what the training loop raises, after reporting it to the channel with this rank and host.
    """
    import ray.train

    from ludwig_nb.engines.builtin.trainer import Training

    context = ray.train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    local_rank = context.get_local_rank()
    client = ChannelClient(loop["channel"])
    run_dir = Path(loop["run_dir"])
    scratch = None if rank == 0 else Path(tempfile.mkdtemp(prefix=f"ludwig_nb-rank{rank}-"))
    log_path = run_dir / WORKER_LOGS / f"rank-{rank}.log"
    try:
        with log_to_file(log_path):
            _train(loop, (rank, local_rank, world), client, scratch or run_dir, Training)
    except BaseException as exc:
        with contextlib.suppress(Exception):  # the run layer still gets Ray's own error
            client.report_error(
                {
                    "rank": rank,
                    "host": socket.gethostname(),
                    "error_type": type(exc).__name__,
                    "message": str(exc) or type(exc).__name__,
                    "traceback": "".join(traceback.format_exception(exc)),
                }
            )
        raise
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _train(
    loop: dict[str, Any],
    ranks: tuple[int, int, int],
    client: ChannelClient,
    run_dir: Path,
    training: Any,
) -> None:
    rank, local_rank, world = ranks
    device = _device(bool(loop["use_gpu"]))
    dataset = read_on_worker(loop["dataset"], loop["config"])
    resume = Path(loop["resume_from"]) if loop["resume_from"] else None
    primary_dir = Path(loop["run_dir"])
    if client.started(rank) > 1 and (primary_dir / "checkpoints" / "latest.ckpt").is_file():
        resume = primary_dir  # Ray Train restarted the workers (max_failures): continue
    job = TrainJob(
        config=loop["config"],
        dataset=dataset,
        run_dir=run_dir,
        run_id=loop["run_id"],
        name=loop["name"],
        device=str(device),
        seed=loop["seed"],
        resume_from=resume,
    )
    agree = torch_agree(device) if world > 1 else None
    if rank == 0:
        emit = StepCounter(EventBatcher(client.push))
        control = WorkerControl(client.control_nowait, client.control_wait, agree)
    else:
        emit = StepCounter(_discard)
        control = WorkerControl(_nothing, _nothing_after, agree)
    distributed = Distributed(
        rank=rank, world_size=world, wrap_module=_wrap_ddp(device) if world > 1 else None
    )
    watch = loop.get("gpu_watch") or {}
    me = identity(rank, local_rank, device)
    reads_gpus = watch.get("enabled", True) is not False and client.claim_node(me["node_id"], rank)
    heartbeat = Heartbeat(
        client.heartbeat,
        me,
        emit,
        node_reader() if reads_gpus else None,
        lambda: control.idle_seconds,
        interval=float(watch.get("interval", 1.0)),
    ).start()
    began = time.monotonic()
    loop_state = training(job, emit, control, engine="ray", distributed=distributed)
    try:
        model = loop_state.run()
    finally:
        heartbeat.stop()
        if rank == 0:
            emit.flush()
    client.report_worker(
        {
            "rank": rank,
            "host": socket.gethostname(),
            "device": str(device),
            "pid": os.getpid(),
            "steps": loop_state.completed,
            "seconds": round(time.monotonic() - began, 3),
            "steps_per_s": round(loop_state.completed / max(1e-9, loop_state.timings["steps"]), 2),
            "idle_s": round(control.idle_seconds, 3),
            "parameters_sha256": parameters_digest(model.module),
        }
    )


def parameters_digest(module: Any) -> str:
    """SHA-256 over the module's parameters and buffers (names and bytes, in order).

    Equal on every rank of a data-parallel run that kept its ranks in step.
    """
    digest = hashlib.sha256()
    for name, value in module.state_dict().items():
        digest.update(name.encode())
        digest.update(value.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _discard(_event: Any) -> None:
    return None


def _nothing() -> tuple[None, None, float]:
    return None, None, 1.0


def _nothing_after(timeout: float) -> tuple[None, None, float]:
    time.sleep(timeout)
    return None, None, 1.0
