"""``batch_size: auto`` and ``eval_batch_size: auto``, decided by what machine load cannot move.

A timed probe picks what the machine's load of the moment favours: the same config, data and seed
then train different models on a busy and on a quiet machine. Here each candidate size is costed
by counting, not timing: one training step (or, for evaluation, one forward pass) of that many
rows runs under torch's dispatcher with every operation counted, with its floating-point work
(torch's ``FlopCounterMode``) and the bytes it writes. A cost model of the machine kind (a
fixed time per operation, a FLOP rate, a memory bandwidth: :class:`MachineKind`) turns the counts
into seconds per step. The counts are exact and the same on every run of the same model and
data, so the pick is the same whatever else the machine does.

The rule: start at the smallest candidate and take the next (twice the size) only while it
lowers the modelled cost per row by at least ``margin`` (10 %). Where a step's fixed cost
dominates (small tabular models) that climbs to the cap; where each row's work dominates (wide
text encoders) it stays small, since a larger batch would not train faster. Candidates are
powers of two from 16 up to a cap (128 on CPU as in Ludwig, 4096 on CUDA; never above 20 % of
the training rows or ``max_batch_size``); a size that runs out of GPU memory ends the climb.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

__all__ = [
    "MARGIN",
    "MachineKind",
    "Pick",
    "StepCost",
    "candidate_sizes",
    "choose",
    "count_cost",
    "eval_candidate_sizes",
    "machine_kind",
]

log = logging.getLogger(__name__)

#: the share by which a doubled batch must lower the cost per row to be preferred
MARGIN = 0.1


@dataclasses.dataclass(frozen=True)
class StepCost:
    """What one step of ``rows`` rows does: operations, floating-point work, bytes written."""

    rows: int
    ops: int
    flops: float
    bytes: float


@dataclasses.dataclass(frozen=True)
class MachineKind:
    """The cost model of a kind of device: seconds per step from a step's counts.

    Args:
        name: What the model is of ("cpu", "cuda: NVIDIA H100 80GB HBM3").
        op_s: Fixed seconds per operation (dispatch, kernel launch).
        flops_per_s: Floating-point operations per second.
        bytes_per_s: Bytes written per second.
    """

    name: str
    op_s: float
    flops_per_s: float
    bytes_per_s: float

    def seconds(self, cost: StepCost) -> float:
        """Modelled seconds for one step of ``cost``."""
        return cost.ops * self.op_s + cost.flops / self.flops_per_s + cost.bytes / self.bytes_per_s


#: one CPU core of today's servers, as the built-in engine runs it (eager, one op at a time)
CPU = MachineKind("cpu", op_s=8e-6, flops_per_s=3e10, bytes_per_s=8e9)


def machine_kind(device: Any) -> MachineKind:
    """The cost model for a torch device: the CPU's, or a GPU's scaled by its multiprocessors.

    A GPU's rates grow with its number of streaming multiprocessors (its kind, not its load).
    """
    if getattr(device, "type", "cpu") != "cuda":
        return CPU
    props = torch.cuda.get_device_properties(device)
    units = int(props.multi_processor_count)
    return MachineKind(
        f"cuda: {props.name}", op_s=1e-5, flops_per_s=2e11 * units, bytes_per_s=1.5e10 * units
    )


@dataclasses.dataclass(frozen=True)
class Pick:
    """A chosen size and why, in words a user reads."""

    size: int
    reason: str


def candidate_sizes(rows: int, on_cuda: bool, max_batch_size: int | None) -> list[int]:
    """Batch sizes to try: powers of two from 16 up to a cap.

    The cap is 4096 on CUDA (128 on the CPU), at most a fifth of the ``rows`` training rows and at
    most ``max_batch_size``; never empty.
    """
    cap = min(4096 if on_cuda else 128, max(16, int(0.2 * rows)), max_batch_size or 2**40)
    sizes, size = [], 16
    while size <= cap:
        sizes.append(size)
        size *= 2
    return sizes or [max(1, cap)]


def eval_candidate_sizes(batch_size: int, rows: int, on_cuda: bool) -> list[int]:
    """Evaluation batch sizes to try.

    ``batch_size`` doubling up to ``rows`` (the largest evaluation split) and the device cap.
    """
    cap = min(4096 if on_cuda else 1024, max(batch_size, rows))
    sizes, size = [], max(1, batch_size)
    while size <= cap:
        sizes.append(size)
        size *= 2
    return sizes or [max(1, batch_size)]


def count_cost(rows: int, run: Callable[[int], None]) -> StepCost:
    """Run ``run(rows)`` (one step of ``rows`` rows) with every torch operation counted.

    Counts the operations the dispatcher sees (forward, backward, optimizer), their
    floating-point work and the bytes of their outputs. Exceptions from ``run`` propagate.
    """
    counter = _OpCounter()
    with FlopCounterMode(display=False) as flops, counter:
        run(rows)
    return StepCost(rows, counter.ops, float(flops.get_total_flops()), float(counter.bytes))


class _OpCounter(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Counts the operations torch dispatches and the bytes of the tensors they return."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops = 0
        self.bytes = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        for item in out if isinstance(out, list | tuple) else (out,):
            if isinstance(item, torch.Tensor):
                self.bytes += item.numel() * item.element_size()
        return out


def choose(
    costs: Sequence[StepCost],
    kind: MachineKind,
    *,
    what: str = "batch_size",
    margin: float = MARGIN,
    limit: str = "",
) -> Pick:
    """The size to train with from the counted ``costs`` (ascending sizes, at least one).

    Climb from the smallest while doubling lowers the modelled cost per row by ``margin`` or
    more. ``limit`` says why the candidates end where they do (memory, the cap).
    """
    per_row = [kind.seconds(c) / c.rows for c in costs]
    chosen = 0
    while chosen + 1 < len(costs) and per_row[chosen + 1] <= (1 - margin) * per_row[chosen]:
        chosen += 1
    size = costs[chosen].rows
    if chosen + 1 < len(costs):
        gain = 1 - per_row[chosen + 1] / per_row[chosen]
        why = (
            f"{costs[chosen + 1].rows} rows would cost {gain:.0%} less per row "
            f"(a larger batch must save {margin:.0%})"
        )
    else:
        why = f"the largest candidate{limit}"
    step_ms = 1000 * kind.seconds(costs[chosen])
    reason = (
        f"{what} auto: {size} ({why}; costed by counting one step's operations on the "
        f"{kind.name} model, {step_ms:.3g} ms a step, not by timing); pin it with "
        f"trainer.{what}: {size}"
    )
    log.info("%s", reason)
    return Pick(size, reason)
