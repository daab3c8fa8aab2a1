"""Everything a run needs before its first step, and its checkpoint state.

Data, model, optimizer and plan; the checkpoint state is what a run saves and restores.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ludwig_nb.core import events as ev
from ludwig_nb.engines.base import TrainJob, job_seed
from ludwig_nb.engines.builtin.batch_probe import (
    Pick,
    StepCost,
    candidate_sizes,
    choose,
    count_cost,
    eval_candidate_sizes,
    machine_kind,
)
from ludwig_nb.engines.builtin.checkpoint import BEST, CHECKPOINTS_DIR, LATEST, load_checkpoint
from ludwig_nb.engines.builtin.device import Precision, TensorData, resolve_device
from ludwig_nb.engines.builtin.distributed import shard_rows
from ludwig_nb.engines.builtin.dropout import own_dropout
from ludwig_nb.engines.builtin.image.encoders import own_augmentation
from ludwig_nb.engines.builtin.memory import apply_memory_limit
from ludwig_nb.engines.builtin.model import ECD, Objective
from ludwig_nb.engines.builtin.optim import auto_learning_rate, build_optimizer
from ludwig_nb.engines.builtin.prefetch import Prefetch
from ludwig_nb.engines.builtin.schedule import LearningRate, Plan, plan_training

if TYPE_CHECKING:  # pandas: the data layer's preprocessing loads only where it reads the data
    from ludwig_nb.engines.builtin.preprocessing.pipeline import FeatureProgress

__all__ = ["Setup", "build_setup", "prepare_splits"]

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Setup:
    """Everything a run needs before its first step: data, model, optimizer, plan, resume state."""

    seed: int
    device: torch.device
    precision: Precision
    metadata: dict[str, Any]
    splits: dict[str, TensorData]
    train: TensorData
    module: ECD
    step_module: Any  # the module, or its torch.compile wrapper
    objective: Objective
    optimizer: torch.optim.Optimizer
    lr: LearningRate
    plan: Plan
    eval_batch_size: int
    checkpoints: Path
    resume: dict[str, Any] | None
    accumulate: int = 1  # gradient_accumulation_steps ("auto" is 1 with a fixed batch size)
    trainable: list[torch.nn.Parameter] = dataclasses.field(default_factory=list)
    #: the run's own random generator (dropout masks): never torch's global one
    generator: torch.Generator | None = None


#: model construction draws initial weights from torch's global generator: one run at a
#: time seeds it (inside fork_rng, so the user's global state is left as it was)
_INIT_LOCK = threading.Lock()


def prepare_splits(
    config: dict[str, Any],
    dataset: Any,
    seed: int,
    metadata: dict[str, Any] | None = None,
    on_feature: FeatureProgress | None = None,
) -> tuple[dict[str, Any], dict[str, TensorData]]:
    """The preprocessing metadata and each split's tensors (``splits.prepare_arrays``).

    From the prefetch process when it read the data (and split it with ``seed``, with no
    saved ``metadata`` to honour); else read here. Raises ``DataError``.
    """
    if isinstance(dataset, Prefetch):
        served = dataset.arrays(seed, metadata, on_feature)
        if served is not None:
            fitted, arrays = served
            return fitted, {name: TensorData(part) for name, part in arrays.items()}
        dataset = dataset.source  # it could not serve this run: read the file here
    # pandas loads only when this process reads the data itself
    from ludwig_nb.engines.builtin.splits import prepare_arrays

    fitted, arrays = prepare_arrays(config, dataset, seed, metadata, on_feature)
    return fitted, {name: TensorData(arrays.pop(name)) for name in list(arrays)}


def _build_module(config: dict[str, Any], metadata: dict[str, Any], seed: int) -> ECD:
    with _INIT_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ECD(config, metadata)


def _resume_state(job: TrainJob) -> dict[str, Any] | None:
    if job.resume_from is None:
        return None
    source = Path(job.resume_from) / CHECKPOINTS_DIR
    state = load_checkpoint(source / LATEST)
    target = Path(job.run_dir) / CHECKPOINTS_DIR
    if source.resolve() != target.resolve() and (source / BEST).is_file():
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / BEST, target / BEST)
    return state


def _out_of_memory(err: RuntimeError) -> bool:
    return "out of memory" in str(err).lower()  # CUDA OOM is a RuntimeError subclass


def _costs(sizes: list[int], step: Callable[[int], None]) -> tuple[list[StepCost], str]:
    """Each size's counted cost, up to the first that runs out of memory (and why they end)."""
    costs: list[StepCost] = []
    for rows in sizes:
        try:
            costs.append(count_cost(rows, step))
        except RuntimeError as err:
            if not _out_of_memory(err) or not costs:
                raise
            return costs, f" that fits in memory ({rows} rows did not)"
    return costs, f" (the cap: {sizes[-1]})"


def _batch_size(trainer: dict[str, Any], job: TrainJob, s: dict[str, Any]) -> Pick:
    """``trainer.batch_size``, or the size ``auto`` picks from counted costs (batch_probe.py)."""
    size = trainer.get("batch_size", "auto")
    if size not in (None, "auto"):
        return Pick(int(size), "")
    module, objective, train = s["module"], s["objective"], s["train"]
    probe = copy.deepcopy(module)
    optimizer = build_optimizer(
        probe.parameters(), trainer.get("optimizer") or {}, 1e-4, bool(trainer.get("compile"))
    )
    rows_generator = torch.Generator().manual_seed(int(job_seed(job)))

    def step(rows: int) -> None:
        index = torch.randint(0, train.rows, (rows,), generator=rows_generator)
        batch = train.gather(index)
        loss, _ = objective(probe(batch), batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    sizes = candidate_sizes(train.rows, s["device"].type == "cuda", trainer.get("max_batch_size"))
    with torch.random.fork_rng(devices=[]):  # the probe's dropout must not move the global RNG
        step(sizes[0])  # the optimizer's state is created on its first step: not counted
        costs, limit = _costs(sizes, step)
    return choose(costs, machine_kind(s["device"]), limit=limit)


def _accumulation(trainer: dict[str, Any]) -> int:
    value = trainer.get("gradient_accumulation_steps")
    return int(value) if isinstance(value, int) and value > 0 else 1


def _eval_batch_size(trainer: dict[str, Any], batch_size: int, s: dict[str, Any]) -> Pick:
    """``trainer.eval_batch_size``, or the size ``auto`` picks from counted forward passes."""
    size = trainer.get("eval_batch_size")
    if size != "auto":
        return Pick(int(size) if isinstance(size, int) and size > 0 else max(batch_size, 256), "")
    module, splits = s["module"], s["splits"]
    data = max(splits.values(), key=lambda d: d.rows)
    rows_generator = torch.Generator().manual_seed(0)
    was_training = module.training
    module.eval()
    device = s["device"]

    @torch.no_grad()
    def forward(rows: int) -> None:
        batch = data.gather(torch.randint(0, data.rows, (rows,), generator=rows_generator))
        module({k: tuple(t.to(device, non_blocking=True) for t in v) for k, v in batch.items()})

    sizes = eval_candidate_sizes(batch_size, data.rows, device.type == "cuda")
    try:
        costs, limit = _costs(sizes, forward)
    finally:
        module.train(was_training)
    return choose(costs, machine_kind(device), what="eval_batch_size", limit=limit)


def evaluation_batches(
    trainer: dict[str, Any], splits: dict[str, TensorData], eval_batch_size: int
) -> int:
    """Batches one evaluation runs.

    Validation and test, and the training split when ``evaluate_training_set`` is on (the ETA sizes
    evaluations with it before timing one).
    """
    names = ["validation", "test"] + (["training"] if trainer.get("evaluate_training_set") else [])
    return sum(-(-splits[n].rows // eval_batch_size) for n in names if n in splits)


def build_setup(
    job: TrainJob,
    trainer: dict[str, Any],
    phase: Callable[[str, str], None] | None = None,
    world_size: int = 1,
    progress: Callable[[ev.DataProgress], None] | None = None,
) -> Setup:
    """Load and preprocess the data, build model, optimizer, schedule.

    Restore nothing yet (the caller restores ``Setup.resume``). ``phase(phase, detail)`` is told
    when a batch size probe runs; ``progress`` gets a ``DataProgress`` per feature fitted and
    one when the model is built. ``world_size``: ranks of a data-parallel run; the plan covers
    one rank's shard. Raises ``DataError`` / ``ValueError``.
    """
    seed = job_seed(job)
    resume = _resume_state(job)
    saved_meta = json.loads(resume["metadata"]) if resume else None
    clock = job.clock or time.time
    on_feature = None
    if progress is not None:
        tell = progress

        def on_feature(index: int, total: int, name: str, rows: int) -> None:
            tell(
                ev.DataProgress(
                    time=clock(),
                    stage="preprocessing",
                    feature=name,
                    index=index,
                    total=total,
                    rows=rows,
                )
            )

    metadata, splits = prepare_splits(job.config, job.dataset, seed, saved_meta, on_feature)
    if progress is not None:
        progress(ev.DataProgress(time=clock(), stage="building"))
    device = resolve_device(job.device)
    apply_memory_limit(job.config, device)  # before the first allocation on the device
    for data in splits.values():
        data.place(device)
    module = _build_module(job.config, metadata, seed).to(device)
    objective = Objective(job.config, metadata)
    parts = {
        "module": module,
        "objective": objective,
        "train": splits["training"],
        "device": device,
    }
    probing = [k for k in ("batch_size", "eval_batch_size") if trainer.get(k) == "auto"]
    if phase is not None and probing and not resume:
        phase("preprocessing", f"probing {' and '.join(probing)} on {device}")
    picked = Pick(int(resume["batch_size"]), "") if resume else _batch_size(trainer, job, parts)
    batch_size = picked.size
    generator = torch.Generator(device=device).manual_seed(seed)
    own_dropout(module, generator)
    own_augmentation(module, generator)
    parts["splits"] = splits
    eval_picked = _eval_batch_size(trainer, batch_size, parts)
    eval_batch_size = eval_picked.size
    plan = dataclasses.replace(
        plan_training(trainer, shard_rows(splits["training"].rows, world_size), batch_size),
        evaluation_batches=evaluation_batches(trainer, splits, eval_batch_size),
        eval_batch_size=eval_batch_size,
        batch_note=" ".join(p.reason for p in (picked, eval_picked) if p.reason),
    )
    base_lr = trainer.get("learning_rate", 0.001)
    base_lr = auto_learning_rate(job.config) if base_lr in (None, "auto") else float(base_lr)
    optimizer = build_optimizer(
        module.parameters(), trainer.get("optimizer") or {}, base_lr, bool(trainer.get("compile"))
    )
    step_module: Any = module
    if trainer.get("compile"):
        step_module = torch.compile(module)
    return Setup(
        seed=seed,
        device=device,
        precision=Precision(device, bool(trainer.get("use_mixed_precision"))),
        metadata=metadata,
        splits=splits,
        train=splits["training"],
        module=module,
        step_module=step_module,
        objective=objective,
        optimizer=optimizer,
        lr=LearningRate(base_lr, trainer.get("learning_rate_scheduler") or {}, plan),
        plan=plan,
        eval_batch_size=eval_batch_size,
        checkpoints=Path(job.run_dir) / CHECKPOINTS_DIR,
        resume=resume,
        accumulate=_accumulation(trainer),
        trainable=[p for p in module.parameters() if p.requires_grad],
        generator=generator,
    )
