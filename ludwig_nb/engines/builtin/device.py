"""Devices, mixed precision, and batches sliced from preprocessed tensors.

Batches are index slices of tensors built once from the preprocessed arrays: no
per-sample Python. On CUDA the tensors go to the GPU once when they fit in
``_RESIDENT_BYTES``; otherwise they stay in pinned host memory and the next batch is
copied ahead on a side stream (non-blocking) while the current one trains.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ludwig_nb.engines.builtin.stacks import stack_columns

__all__ = ["Batch", "Precision", "TensorData", "batch_order", "resolve_device"]

log = logging.getLogger(__name__)

#: feature name -> its tensors (rows first)
Batch = dict[str, tuple[torch.Tensor, ...]]

_RESIDENT_BYTES = 2 * 1024**3  # bytes of preprocessed data moved to the GPU whole


def resolve_device(requested: str | None) -> torch.device:
    """``None``/"auto": the first CUDA GPU when available, else CPU.

    Raises ``ValueError`` for a CUDA device that this machine does not have.
    """
    if requested in (None, "", "auto"):
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    device = torch.device(requested)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {requested!r} asked for, but CUDA is not available here")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {requested!r} does not exist ({torch.cuda.device_count()} GPU(s))"
            )
    return device


class Precision:
    """``use_mixed_precision``: CUDA autocast in bf16 where supported, else fp16 with a GradScaler.

    On CPU it is a documented no-op (full fp32), as in Ludwig.

    Args:
        device: The training device.
        enabled: ``trainer.use_mixed_precision``.
    """

    def __init__(self, device: torch.device, enabled: bool):
        self.device = device
        self.dtype: torch.dtype | None = None
        self.scaler: Any = None
        if enabled and device.type == "cuda":
            if torch.cuda.is_bf16_supported():
                self.dtype = torch.bfloat16
            else:
                self.dtype = torch.float16
                self.scaler = torch.amp.GradScaler("cuda")
        elif enabled:
            log.info("use_mixed_precision is ignored on %s (CUDA only)", device)

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The autocast context for a forward pass; a no-op in full precision."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)


def batch_order(rows: int, seed: int, epoch: int, shuffle: bool) -> torch.Tensor:
    """Row order of one epoch.

    A permutation fixed by ``(seed, epoch)`` so that a resumed run sees the same batches as an
    uninterrupted one.
    """
    if not shuffle:
        return torch.arange(rows)
    generator = torch.Generator().manual_seed(int(seed) * 100_003 + int(epoch))
    return torch.randperm(rows, generator=generator)


class TensorData:
    """The preprocessed arrays of one split as tensors, with batch access."""

    def __init__(
        self,
        arrays: dict[str, tuple[np.ndarray, ...]],
        stacks: Mapping[str, Sequence[str]] | None = None,
    ):
        """Hold the arrays of a split, stacking 1-D features into one tensor per group.

        ``stacks``: group key -> names of 1-D features held as the columns of one float32 ``[rows,
        len(names)]`` tensor under that key (one gather per batch instead of one per feature).
        Stacked entries are taken out of ``arrays`` as they are copied, so the data exist about once
        at any moment.
        """
        stacked: Batch = {}
        for key, names in (stacks or {}).items():
            present = [n for n in names if n in arrays]
            if present:
                stacked[key] = (torch.from_numpy(stack_columns(arrays, present)),)
        self.tensors: Batch = {
            name: tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in parts)
            for name, parts in arrays.items()
        }
        self.tensors.update(stacked)
        first = next(iter(self.tensors.values()), (torch.zeros(0),))
        self.rows = int(first[0].shape[0])
        self.pinned = False

    @property
    def device(self) -> torch.device:
        """Where the tensors are (CPU when pinned or when there are none)."""
        first = next(iter(self.tensors.values()), None)
        return first[0].device if first else torch.device("cpu")

    @property
    def nbytes(self) -> int:
        """Memory held by the tensors, in bytes."""
        return sum(t.numel() * t.element_size() for ts in self.tensors.values() for t in ts)

    def place(self, device: torch.device) -> TensorData:
        """Move to ``device`` when it fits, else pin host memory (CUDA); returns self."""
        if device.type != "cuda":
            return self
        if self.nbytes <= _RESIDENT_BYTES:
            self.tensors = {k: tuple(t.to(device) for t in v) for k, v in self.tensors.items()}
        else:
            self.tensors = {k: tuple(t.pin_memory() for t in v) for k, v in self.tensors.items()}
            self.pinned = True
        return self

    def gather(self, index: torch.Tensor) -> Batch:
        """The batch of rows ``index`` (a 1-D tensor), pinned again when the data are pinned."""
        index = index.to(self.device)  # no-op when already there
        if self.pinned:  # gathered rows must be pinned again for a non-blocking copy
            return {
                k: tuple(t.index_select(0, index).pin_memory() for t in v)
                for k, v in self.tensors.items()
            }
        return {k: tuple(t.index_select(0, index) for t in v) for k, v in self.tensors.items()}

    def rows_slice(self, start: int, end: int) -> Batch:
        """The batch of rows ``start`` to ``end - 1`` (views, no copy)."""
        return {k: tuple(t[start:end] for t in v) for k, v in self.tensors.items()}


def to_device(batch: Batch, device: torch.device) -> Batch:
    return {k: tuple(t.to(device, non_blocking=True) for t in v) for k, v in batch.items()}


def prefetched(
    make: Callable[[int], Batch], count: int, device: torch.device, start: int = 0
) -> Iterator[tuple[int, Batch]]:
    """Yield ``(i, batch on device)``, copying the next batch while this one trains.

    ``i`` runs over ``[start, count)``. From pinned host memory, batch ``i + 1`` is copied on a side
    stream while batch ``i`` trains.
    """
    if device.type != "cuda":
        for i in range(start, count):
            yield i, make(i)
        return
    stream = torch.cuda.Stream(device=device)  # type: ignore[no-untyped-call]

    def issue(i: int) -> Batch:
        with torch.cuda.stream(stream):
            return to_device(make(i), device)

    pending = issue(start) if start < count else None
    for i in range(start, count):
        torch.cuda.current_stream(device).wait_stream(stream)
        current = pending
        assert current is not None
        for tensors in current.values():
            for t in tensors:
                t.record_stream(torch.cuda.current_stream(device))
        pending = issue(i + 1) if i + 1 < count else None
        yield i, current
