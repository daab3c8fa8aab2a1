"""What a training step holds for backward: live bytes of saved tensors, and their peak.

:class:`SavedTensorMeter` counts, through ``torch.autograd.graph.saved_tensors_hooks``, every
tensor autograd saves for the backward pass that is not the model's own (parameters, buffers,
bitsandbytes' quantization constants), de-duplicated by storage (a view and its base count
once), from the moment it is saved until autograd lets it go. Held across the forward and
the backward pass it gives the peak of activation memory, gradient checkpointing's
recomputation included when that runs through the same hooks (reentrant checkpointing; PEFT's
own measurement script, ``train_memory.py --monitor_tensors`` in its repository, counts the
same tensors at the end of the forward pass).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["SavedTensorMeter", "model_storages", "storage_bytes"]


class _Held:
    """A saved tensor as autograd keeps it: released (and uncounted) when autograd drops it."""

    __slots__ = ("key", "meter", "tensor")

    def __init__(self, tensor: torch.Tensor, key: int, meter: SavedTensorMeter) -> None:
        self.tensor, self.key, self.meter = tensor, key, meter

    def __del__(self) -> None:
        self.meter._release(self.key)


class SavedTensorMeter:
    """Live and peak bytes of the tensors autograd holds for backward (a context manager).

    Args:
        model: its parameters, buffers and quantization constants are not counted.

    Attributes:
        live: bytes held now.
        peak: the most bytes held at once since the meter was made.
        saved: bytes ever saved (each storage once), the forward pass's total.
        recompute_peak: after :meth:`backward_started`, the most bytes held at once from
            the first tensor saved during the backward pass on (gradient checkpointing's
            recomputation; 0 without one). The output layer's tensors are gone by then,
            so this peak and the forward's end grow differently with the vocabulary.
    """

    def __init__(self, model: Any) -> None:
        self._own = {ptr for ptr, _ in model_storages(model)}
        self._counts: dict[int, int] = {}
        self._sizes: dict[int, int] = {}
        self._ever: set[int] = set()
        self.live = self.peak = self.saved = self.recompute_peak = 0
        self._backward = self._recomputing = False
        self._hooks: Any = None

    def backward_started(self) -> None:
        """The forward pass is over: tensors saved from now on are recomputed ones."""
        self._backward = True

    def __enter__(self) -> SavedTensorMeter:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)

    def _pack(self, tensor: torch.Tensor) -> Any:
        storage = tensor.untyped_storage()
        key, size = storage.data_ptr(), storage.nbytes()
        if size == 0 or key in self._own or tensor.device.type == "meta":
            return tensor
        count = self._counts.get(key, 0)
        self._recomputing = self._recomputing or self._backward
        if count == 0:
            self._sizes[key] = size
            self.live += size
            self.peak = max(self.peak, self.live)
            if key not in self._ever:
                self._ever.add(key)
                self.saved += size
        if self._recomputing:
            self.recompute_peak = max(self.recompute_peak, self.live)
        self._counts[key] = count + 1
        return _Held(tensor, key, self)

    def _release(self, key: int) -> None:
        count = self._counts.get(key, 0) - 1
        if count > 0:
            self._counts[key] = count
        elif count == 0:
            del self._counts[key]
            self.live -= self._sizes.pop(key)


def _unpack(held: Any) -> torch.Tensor:
    return held.tensor if isinstance(held, _Held) else held


def model_storages(model: Any) -> Iterator[tuple[int, int]]:
    """``(data pointer, bytes)`` of every storage the model owns, each once.

    Parameters, buffers, and tensors hanging off a parameter (bitsandbytes' ``quant_state``
    with its nested statistics, 8-bit row scales ``SCB``).
    """
    seen: set[int] = set()
    for tensor in _owned(model):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key not in seen and storage.nbytes() > 0:
            seen.add(key)
            yield key, storage.nbytes()


def storage_bytes(model: Any) -> int:
    """Bytes of every storage the model owns (weights as stored, quantized or not)."""
    return sum(size for _, size in model_storages(model))


def _owned(model: Any) -> Iterator[torch.Tensor]:
    for tensor in (*model.parameters(), *model.buffers()):
        yield tensor
        for name in ("quant_state", "SCB"):
            yield from _tensors_in(getattr(tensor, name, None), depth=3)


def _tensors_in(obj: Any, depth: int) -> Iterator[torch.Tensor]:
    """Tensors in ``obj`` and in the attributes of its attributes, ``depth`` levels down."""
    if isinstance(obj, torch.Tensor):
        yield obj
        return
    if obj is None or depth == 0 or not hasattr(obj, "__dict__") or isinstance(obj, type):
        return
    for value in vars(obj).values():
        yield from _tensors_in(value, depth - 1)
