"""GPU memory: a per-process cap, and surviving a CUDA out-of-memory error in a step.

* :func:`apply_memory_limit`: ``gpu_watch.gpu_memory_limit`` (Ludwig's ``gpu_memory_limit``:
  a fraction of the card in (0, 1], or MiB when above 1) through
  ``torch.cuda.set_per_process_memory_fraction``, before the first allocation.
* :class:`MicroBatcher`: runs each step's batch whole until a CUDA OOM; then it redoes
  that step in two micro-batches (four after a second OOM, ...), each loss weighted by its
  share of the rows and the optimizer stepping once after the last, so the step's batch,
  the effective batch size, the data order and the step count are all unchanged. The
  split stays for the rest of the run and is told through ``on_split`` (an
  ``OomRecovered`` event). A step is redone exactly when the OOM hits the first
  micro-step of an accumulation cycle (always, without ``gradient_accumulation_steps``);
  later in a cycle the gradients accumulated so far in that cycle are dropped and the
  event says so.

The seam :data:`fault_hook` (None in production) is called with ``(step, rows)`` before
every forward pass of a step; tests set it to raise ``torch.cuda.OutOfMemoryError`` at a
chosen step, on CPU, through the real step path.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ludwig_nb.core.events import Event, OomRecovered
from ludwig_nb.engines.builtin.device import Batch

__all__ = [
    "MicroBatcher",
    "OutOfMemory",
    "apply_memory_limit",
    "fault_hook",
    "is_out_of_memory",
    "oom_recovery_enabled",
]

log = logging.getLogger(__name__)

#: test seam: called as ``fault_hook(step, rows)`` before each forward pass of a step
fault_hook: Callable[[int, int], None] | None = None

_MIB = 1 << 20


class OutOfMemory(RuntimeError):
    """A step ran out of GPU memory and could not be recovered.

    The message says what to change (a smaller ``batch_size``, ``gpu_watch.oom_recovery: true``).
    """


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is a CUDA out-of-memory error.

    True for ``torch.cuda.OutOfMemoryError`` and the older "CUDA out of memory" ``RuntimeError``.
    """
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def oom_recovery_enabled(config: Mapping[str, Any]) -> bool:
    """``gpu_watch.oom_recovery``.

    True / false, or "auto" (the default): on when ``trainer.batch_size`` is "auto".
    """
    setting = (config.get("gpu_watch") or {}).get("oom_recovery", "auto")
    if setting == "auto":
        return bool((config.get("trainer") or {}).get("batch_size", "auto") == "auto")
    return bool(setting)


def memory_fraction(limit: float, total_bytes: int) -> float:
    """The fraction of a ``total_bytes`` card that ``limit`` means.

    Itself when in (0, 1], else MiB. Raises ``ValueError`` for a limit <= 0 or above the card.
    """
    if limit <= 0:
        raise ValueError(f"gpu_memory_limit must be > 0, got {limit:g}")
    fraction = limit if limit <= 1.0 else limit * _MIB / total_bytes
    if fraction > 1.0:
        raise ValueError(
            f"gpu_memory_limit {limit:g} MiB is more than the GPU's {total_bytes / _MIB:.0f} MiB"
        )
    return fraction


def apply_memory_limit(config: Mapping[str, Any], device: torch.device) -> float | None:
    """Cap this process's share of ``device`` at ``gpu_watch.gpu_memory_limit``.

    Returns the fraction set, or None (no limit, or not a CUDA device). Call it before anything is
    allocated on the device. Raises ``ValueError`` for a limit the card cannot meet.
    """
    limit = (config.get("gpu_watch") or {}).get("gpu_memory_limit")
    if limit is None:
        return None
    if device.type != "cuda":
        log.info("gpu_memory_limit %s ignored: the run trains on %s", limit, device)
        return None
    total = torch.cuda.get_device_properties(device).total_memory
    fraction = memory_fraction(float(limit), int(total))
    torch.cuda.set_per_process_memory_fraction(fraction, device)
    return fraction


def _slices(batch: Batch, parts: int) -> list[tuple[Batch, int]]:
    rows = int(next(iter(batch.values()))[0].shape[0])
    size = math.ceil(rows / parts)
    out = []
    for start in range(0, rows, size):
        stop = min(rows, start + size)
        out.append(({k: tuple(t[start:stop] for t in v) for k, v in batch.items()}, stop - start))
    return out


ForwardBackward = Callable[[Batch, float, bool], torch.Tensor]


class MicroBatcher:
    """Runs steps whole, or in micro-batches once a CUDA OOM asked for it.

    ``enabled``: recover (else an OOM raises :class:`OutOfMemory` with advice);
    ``on_split(step, rows, micro_rows, parts, message)``: told at every new split;
    ``release``: frees cached memory after an OOM (default ``torch.cuda.empty_cache``
    when CUDA is there); ``zero_grad``: clears the step's partial gradients.
    """

    def __init__(
        self,
        enabled: bool,
        on_split: Callable[[int, int, int, int, str], None],
        zero_grad: Callable[[], None],
        release: Callable[[], None] | None = None,
        parts: int = 1,
    ) -> None:
        self.enabled, self.parts = enabled, parts
        self._on_split, self._zero_grad = on_split, zero_grad
        self._release = release or _empty_cache

    @classmethod
    def for_training(
        cls,
        config: Mapping[str, Any],
        emit: Callable[[Event], None],
        clock: Callable[[], float],
        zero_grad: Callable[[], None],
    ) -> MicroBatcher:
        """Build the built-in trainer's micro-batcher.

        Enabled per :func:`oom_recovery_enabled`, each split emitted as an ``OomRecovered`` event.
        """

        def on_split(step: int, rows: int, micro: int, parts: int, message: str) -> None:
            emit(
                OomRecovered(
                    time=clock(),
                    step=step,
                    batch_size=rows,
                    micro_batch_size=micro,
                    accumulation=parts,
                    message=message,
                )
            )

        return cls(oom_recovery_enabled(config), on_split, zero_grad)

    def run(
        self, step: int, batch: Batch, accumulate: int, sync: bool, fb: ForwardBackward
    ) -> torch.Tensor:
        """Run one step, splitting the batch when it runs out of GPU memory.

        One step through ``fb(batch, divisor, sync)`` (the trainer's forward/backward, which divides
        the loss by ``divisor`` and steps the optimizer when ``sync``); returns the step's mean loss
        (a detached tensor, read later). Raises :class:`OutOfMemory` when it cannot go on.
        """
        while True:
            try:
                return self._run(step, batch, accumulate, sync, fb)
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                self._recover(step, batch, accumulate, error)

    def _run(
        self, step: int, batch: Batch, accumulate: int, sync: bool, fb: ForwardBackward
    ) -> torch.Tensor:
        rows = int(next(iter(batch.values()))[0].shape[0])
        if self.parts == 1:
            if fault_hook is not None:
                fault_hook(step, rows)
            return fb(batch, accumulate, sync)
        chunks = _slices(batch, self.parts)
        losses = []
        for i, (chunk, size) in enumerate(chunks):
            if fault_hook is not None:
                fault_hook(step, size)
            share = size / rows  # each chunk's mean loss weighs its share of the rows
            losses.append(share * fb(chunk, accumulate / share, sync and i == len(chunks) - 1))
        return torch.stack(losses).sum()

    def _recover(self, step: int, batch: Batch, accumulate: int, error: BaseException) -> None:
        rows = int(next(iter(batch.values()))[0].shape[0])
        micro = math.ceil(rows / self.parts)
        if not self.enabled or micro <= 1:
            self._zero_grad()
            raise OutOfMemory(_advice(step, rows, micro, self.enabled)) from error
        self._zero_grad()
        self._release()
        self.parts *= 2
        micro = math.ceil(rows / self.parts)
        message = (
            f"out of GPU memory at step {step}: batches of {rows} now run as "
            f"{self.parts} micro-batches of {micro}, same effective batch"
        )
        if accumulate > 1 and step % accumulate:
            message += (
                f"; the gradients of the {step % accumulate} earlier step(s) of this "
                "accumulation cycle were dropped"
            )
        log.warning("ludwig_nb: %s", message)
        self._on_split(step, rows, micro, self.parts, message)


def _advice(step: int, rows: int, micro: int, enabled: bool) -> str:
    if enabled:
        return (
            f"out of GPU memory at step {step} even with micro-batches of {micro} row: "
            "use a smaller model or a GPU with more memory"
        )
    return (
        f"out of GPU memory at step {step} with batch size {rows}: lower "
        "trainer.batch_size, use batch_size: auto, or set gpu_watch.oom_recovery: true "
        "to split batches and carry on"
    )


def _empty_cache() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
