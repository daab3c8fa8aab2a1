"""Fractional ``gpu_resources_per_trial`` on the local executor: trials packed onto GPUs.

A trial asking for a share ``s`` of a GPU (0 < s <= 1) is placed on the GPU with the most
free share that still fits it (so 0.5 runs two trials per GPU at once, spread over the
GPUs first), trains on that device, and is capped in memory. The cap is CUDA's
``set_per_process_memory_fraction`` (the built-in engine applies
``gpu_watch.gpu_memory_limit`` before its first allocation), which holds for the whole
process: trials are threads of one kernel, so the cap of a GPU is the sum of the shares of
the trials placed on it when the latest one starts (two trials at 0.5: the kernel may take
the whole card, one trial alone 0.5 of it). One trial can therefore use more than its own
share at the other's expense; per-trial caps need one process per trial, which the ``ray``
executor gives (there each trial's cap is its own share).

The GPUs are NVML's (``CUDA_VISIBLE_DEVICES`` narrows them, numbered as torch numbers
them). :data:`device_name` maps a GPU index to the torch device a trial trains on; tests set
it (this machine has no CUDA) and drive the rest through the real path.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

__all__ = ["GpuPacker", "device_name", "packer_for", "trial_memory_limit", "visible_gpus"]

#: test seam: the torch device of GPU ``index`` (a machine without CUDA maps it to "cpu")
device_name: Callable[[int], str] = lambda index: f"cuda:{index}"  # noqa: E731

_EPS = 1e-9


def visible_gpus(count_nvml: Callable[[], tuple[int, str]] | None = None) -> tuple[int, str]:
    """GPUs a trial may train on, and why there are none ("" when there are).

    Args:
        count_nvml: returns (NVML's device count, its reason when 0); default NVML.

    Returns:
        (count, reason): NVML's GPUs, narrowed by ``CUDA_VISIBLE_DEVICES`` when it is set.
    """
    count, reason = (count_nvml or _nvml_count)()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        listed = [d for d in visible.split(",") if d.strip() and d.strip() != "-1"]
        count = min(count, len(listed))
        if not count:
            reason = reason or f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU"
    return count, reason


def _nvml_count() -> tuple[int, str]:
    from ludwig_nb.gpu.nvml import NvmlSource

    source = NvmlSource()
    try:
        return (source.device_count, "") if source.available else (0, source.reason)
    finally:
        source.close()


def trial_memory_limit(share: float) -> float:
    """``gpu_watch.gpu_memory_limit`` for a share of one GPU (a fraction in (0, 1])."""
    return min(1.0, round(share, 6))


class GpuPacker:
    """Shares of ``count`` GPUs held by running trials, each asking for ``share``.

    Args:
        count: GPUs to pack onto (>= 1).
        share: what one trial takes of a GPU, in (0, 1].

    Raises:
        ValueError: no GPU, or a share outside (0, 1].
    """

    def __init__(self, count: int, share: float) -> None:
        if count < 1 or not 0 < share <= 1:
            raise ValueError(f"packing {share} of a GPU onto {count} GPUs")
        self.share = share
        self.used = [0.0] * count

    @property
    def capacity(self) -> int:
        """Trials that fit at once on all the GPUs."""
        return len(self.used) * math.floor(1.0 / self.share + _EPS)

    def has_room(self) -> bool:
        """True when another trial fits on some GPU now."""
        return any(u + self.share <= 1.0 + _EPS for u in self.used)

    def place(self) -> int | None:
        """Take a share on the GPU with the most free share that fits; its index, or None."""
        fits = [i for i, u in enumerate(self.used) if u + self.share <= 1.0 + _EPS]
        if not fits:
            return None
        index = min(fits, key=lambda i: (self.used[i], i))
        self.used[index] += self.share
        return index

    def release(self, index: int) -> None:
        """Give the share of a trial that ended on GPU ``index`` back."""
        self.used[index] = max(0.0, self.used[index] - self.share)

    def load(self, index: int) -> float:
        """The share of GPU ``index`` held now (the process's memory cap on it)."""
        return self.used[index]


def packer_for(share: float, gpu_count: int | None = None) -> GpuPacker:
    """The GPUs trials asking for ``share`` of one are packed onto.

    Args:
        share: ``gpu_resources_per_trial`` (> 0; more than 1 packs one trial per GPU).
        gpu_count: GPUs to pack onto (None: :func:`visible_gpus`).

    Raises:
        ConfigError: at ``gpu_resources_per_trial``, when this machine shows no GPU.
    """
    from ludwig_nb.config import ConfigError

    count, reason = (gpu_count, "") if gpu_count is not None else visible_gpus()
    if count < 1:
        raise ConfigError(
            f"gpu_resources_per_trial is {share:g}, but this machine shows no GPU"
            + (f" ({reason})" if reason else ""),
            path="hyperopt.executor.gpu_resources_per_trial",
            hint="set it to 0 to train the trials on the CPU",
        )
    return GpuPacker(count, min(1.0, share))
