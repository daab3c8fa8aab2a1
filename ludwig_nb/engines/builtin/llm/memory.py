"""Surviving a CUDA out-of-memory error in an LLM step, and choosing ``batch_size: auto``.

Recovery, when ``gpu_watch.oom_recovery`` allows it (engines/builtin/memory.py's rule): the
step is redone in twice as many micro-batches (the same rows, the same effective batch, each
part's loss weighted by its share of the step's target tokens, so the step's loss and
gradients are the whole batch's); once micro-batches are down to one row, gradient
checkpointing is turned on; after that the run fails with what to change. Each change is an
``OomRecovered`` event (the dashboard says it) and stays for the rest of the run.

The seam is engines/builtin/memory.py's ``fault_hook(step, rows)``, called before every
forward pass of a step (tests raise an out-of-memory error with it on the CPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ludwig_nb.engines.builtin import memory as shared
from ludwig_nb.engines.builtin.memory import OutOfMemory, is_out_of_memory

__all__ = ["StepRunner", "auto_batch_size"]

#: fb(batch part, weight, optimizer step?) -> the part's mean loss (detached)
PartStep = Callable[[dict[str, torch.Tensor], float, bool], torch.Tensor]


def _slices(batch: dict[str, torch.Tensor], parts: int) -> list[dict[str, torch.Tensor]]:
    rows = batch["input_ids"].shape[0]
    size = math.ceil(rows / parts)
    return [{k: v[i : i + size] for k, v in batch.items()} for i in range(0, rows, size)]


class StepRunner:
    """Runs each step whole or in micro-batches; recovers from out-of-memory errors.

    Args:
        enabled: Recover (else an out-of-memory error raises ``OutOfMemory`` with advice).
        on_change: Told ``(step, rows, micro_rows, parts, message)`` at every change.
        zero_grad: Clears the step's partial gradients.
        checkpointing: Turns gradient checkpointing on (the second stage); returns False
            when it already was.
    """

    def __init__(
        self,
        enabled: bool,
        on_change: Callable[[int, int, int, int, str], None],
        zero_grad: Callable[[], None],
        checkpointing: Callable[[], bool],
    ) -> None:
        self.enabled, self.parts = enabled, 1
        self._on_change, self._zero_grad, self._checkpointing = on_change, zero_grad, checkpointing

    def run(self, step: int, batch: dict[str, torch.Tensor], sync: bool, fb: PartStep) -> Any:
        """The step's mean loss over its target tokens (a detached tensor)."""
        while True:
            try:
                return self._run(step, batch, sync, fb)
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                self._recover(step, batch, error)

    def _run(self, step: int, batch: dict[str, torch.Tensor], sync: bool, fb: PartStep) -> Any:
        total = int((batch["labels"][:, 1:] != -100).sum()) or 1
        chunks = _slices(batch, self.parts)
        losses = []
        for i, chunk in enumerate(chunks):
            if shared.fault_hook is not None:
                shared.fault_hook(step, int(chunk["input_ids"].shape[0]))
            share = int((chunk["labels"][:, 1:] != -100).sum()) / total
            last = sync and i == len(chunks) - 1
            losses.append(share * fb(chunk, share, last))
        return torch.stack(losses).sum()

    def _recover(self, step: int, batch: dict[str, torch.Tensor], error: BaseException) -> None:
        rows = int(batch["input_ids"].shape[0])
        self._zero_grad()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        micro = math.ceil(rows / self.parts)
        if not self.enabled:
            raise OutOfMemory(_advice(step, rows, enabled=False)) from error
        if micro > 1:
            self.parts = min(rows, self.parts * 2)
            micro = math.ceil(rows / self.parts)
            message = (
                f"out of GPU memory at step {step}: batches of {rows} now run as "
                f"{self.parts} micro-batches of {micro}, same effective batch"
            )
        elif self._checkpointing():
            message = (
                f"out of GPU memory at step {step} with micro-batches of one row: "
                "gradient checkpointing is on now (less memory, slower steps)"
            )
        else:
            raise OutOfMemory(_advice(step, rows, enabled=True)) from error
        self._on_change(step, rows, micro, self.parts, message)


def _advice(step: int, rows: int, *, enabled: bool) -> str:
    fixes = (
        "quantization: {bits: 4}, a smaller trainer.batch_size with "
        "gradient_accumulation_steps, trainer.enable_gradient_checkpointing: true, or a "
        "shorter preprocessing.global_max_sequence_length"
    )
    if enabled:
        return (
            f"out of GPU memory at step {step} with one-row micro-batches and gradient "
            f"checkpointing: try {fixes}, or a GPU with more memory"
        )
    return (
        f"out of GPU memory at step {step} with batch size {rows}: try {fixes}; or set "
        "gpu_watch.oom_recovery: true to split batches and carry on"
    )


def auto_batch_size(
    try_rows: Callable[[int], None], rows: int, on_cuda: bool, cap: int | None
) -> int:
    """``batch_size: auto``: the largest power of two (up to 64) whose step fits.

    ``try_rows(n)`` runs a forward and backward pass on the ``n`` longest rows and raises an
    out-of-memory error when they do not fit. On the CPU, 8 rows (memory is rarely the limit
    there and larger batches only slow each step). Raises ``OutOfMemory`` when one row does
    not fit.
    """
    limit = max(1, min(rows, cap or rows, 64 if on_cuda else 8))
    if not on_cuda:
        return limit
    size = 1 << (limit.bit_length() - 1)
    while size >= 1:
        try:
            try_rows(size)
            return size
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            torch.cuda.empty_cache()
            size //= 2
    raise OutOfMemory(_advice(0, 1, enabled=True))
