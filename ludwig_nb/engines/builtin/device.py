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
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from ludwig_nb.engines.builtin.stacks import stack_columns

__all__ = ["Batch", "Precision", "RowSource", "TensorData", "batch_order", "resolve_device"]

log = logging.getLogger(__name__)

#: feature name -> its tensors (rows first)
Batch = dict[str, tuple[torch.Tensor, ...]]

_RESIDENT_BYTES = 2 * 1024**3  # bytes of preprocessed data moved to the GPU whole


@runtime_checkable
class RowSource(Protocol):
    """A column read at each batch instead of held as a tensor (decoded images on disk)."""

    def __len__(self) -> int: ...

    def read(self, index: np.ndarray) -> np.ndarray:
        """The rows ``index``, rows first."""
        ...

    def read_range(self, start: int, end: int) -> np.ndarray:
        """Rows ``start`` to ``end - 1``."""
        ...


def _is_lazy(parts: Sequence[Any]) -> bool:
    return len(parts) == 1 and isinstance(parts[0], RowSource)


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
    """Row order of one epoch: Ludwig's, so the same seed trains on the same batches in both.

    Ludwig's sampler draws ``RandomState(seed + epoch).permutation(rows)`` (epochs from 0), a
    permutation fixed by ``(seed, epoch)``: a resumed run sees the same batches as an
    uninterrupted one.
    """
    if not shuffle:
        return torch.arange(rows)
    state = np.random.RandomState((int(seed) + int(epoch)) % 2**32)
    return torch.from_numpy(state.permutation(rows))


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
        #: columns read from elsewhere at each batch (decoded images in a disk cache)
        self.lazy: dict[str, RowSource] = {
            name: parts[0]  # type: ignore[misc]  # checked by _is_lazy
            for name, parts in arrays.items()
            if _is_lazy(parts)
        }
        self.tensors: Batch = {
            name: tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in parts)
            for name, parts in arrays.items()
            if name not in self.lazy
        }
        self.tensors.update(stacked)
        first = next(iter(self.tensors.values()), (torch.zeros(0),))
        lazy_rows = [len(source) for source in self.lazy.values()]
        self.rows = int(first[0].shape[0]) if self.tensors or not lazy_rows else lazy_rows[0]
        self.pinned = False
        self._target = torch.device("cpu")  # where lazy batches go (the placed device)

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
        """Move to ``device`` when it fits, else pin host memory (CUDA); returns self.

        Lazy columns stay where they are; their batches are pinned (and copied to ``device`` when
        the other tensors are there).
        """
        if device.type != "cuda":
            return self
        self._target = device
        if self.nbytes <= _RESIDENT_BYTES:
            self.tensors = {k: tuple(t.to(device) for t in v) for k, v in self.tensors.items()}
        else:
            self.tensors = {k: tuple(t.pin_memory() for t in v) for k, v in self.tensors.items()}
            self.pinned = True
        return self

    def gather(self, index: torch.Tensor) -> Batch:
        """The batch of rows ``index`` (a 1-D tensor), pinned again when the data are pinned."""
        lazy = self._lazy_batch(lambda source: source.read(index.cpu().numpy()))
        index = index.to(self.device)  # no-op when already there
        if self.pinned:  # gathered rows must be pinned again for a non-blocking copy
            batch = {
                k: tuple(t.index_select(0, index).pin_memory() for t in v)
                for k, v in self.tensors.items()
            }
        else:
            batch = {k: tuple(t.index_select(0, index) for t in v) for k, v in self.tensors.items()}
        batch.update(lazy)
        return batch

    def rows_slice(self, start: int, end: int) -> Batch:
        """The batch of rows ``start`` to ``end - 1`` (views, no copy, but for lazy columns)."""
        batch = {k: tuple(t[start:end] for t in v) for k, v in self.tensors.items()}
        batch.update(self._lazy_batch(lambda source: source.read_range(start, end)))
        return batch

    def _lazy_batch(self, read: Callable[[RowSource], np.ndarray]) -> Batch:
        """The lazy columns' rows: pinned for a GPU, on it when the other tensors are."""
        out: Batch = {}
        for name, source in self.lazy.items():
            rows = torch.from_numpy(read(source))
            if self._target.type == "cuda":
                rows = rows.pin_memory()
                if self.device.type == "cuda":
                    rows = rows.to(self.device, non_blocking=True)
            out[name] = (rows,)
        return out


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
