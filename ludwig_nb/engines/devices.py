"""What an engine's framework knows of the devices it trains on, asked through the engine.

A profile records the framework allocator's bytes beside NVML's and the framework's version,
a sweep measures each pilot's peak memory, Ludwig's ``description.json`` lists the devices
the framework sees. The layers above the engines ask ``Engine.devices()`` for these facts
(:class:`DeviceFacts`) and never name a framework. :class:`TorchDeviceFacts` answers for
the engines that train with torch in this process, from the torch that is already imported:
it never imports torch (a run that has not loaded it has no facts to give).
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType
from typing import Protocol

__all__ = ["NO_DEVICE_FACTS", "DeviceFacts", "NoDeviceFacts", "PeakMemory", "TorchDeviceFacts"]

log = logging.getLogger(__name__)


class PeakMemory(Protocol):
    """The peak memory of one device, measured from :meth:`reset` on."""

    def reset(self) -> None:
        """Start measuring (frees the framework's cached blocks first)."""
        ...

    def read(self) -> tuple[int, int]:
        """(peak bytes allocated since :meth:`reset`, the device's total bytes)."""
        ...


class DeviceFacts(Protocol):
    """What a framework knows of its devices; every fact degrades to "none" on its own."""

    def allocator_memory(self, index: int) -> dict[str, int]:
        """The framework allocator's bytes on GPU ``index`` ({} when it holds none there).

        Keys: ``torch_allocated``, ``torch_reserved``, ``torch_peak_allocated``.
        """
        ...

    def versions(self) -> dict[str, str]:
        """The framework's version under its key (``{"torch_version": "2.13.0"}``); {} if none."""
        ...

    def accelerators(self) -> list[dict[str, object]]:
        """The GPUs the framework sees, in its order: ``{"gpu_type", "device_capability"}``."""
        ...

    def peak_memory(self, device: str | None) -> PeakMemory | None:
        """A meter of the peak memory of ``device`` ("cuda:1"; None: the default).

        None when runs there are not on a GPU the framework measures.
        """
        ...


class NoDeviceFacts:
    """An engine whose framework tells nothing (the default of ``Engine.devices``)."""

    def allocator_memory(self, index: int) -> dict[str, int]:
        """Nothing: {}."""
        del index
        return {}

    def versions(self) -> dict[str, str]:
        """Nothing: {}."""
        return {}

    def accelerators(self) -> list[dict[str, object]]:
        """Nothing: []."""
        return []

    def peak_memory(self, device: str | None) -> PeakMemory | None:
        """Nothing: None."""
        del device
        return None


NO_DEVICE_FACTS = NoDeviceFacts()


def _torch() -> ModuleType | None:
    """Torch when this process imported it; never imports it."""
    return sys.modules.get("torch")


class TorchDeviceFacts:
    """Facts from the torch this process has imported (none before it is)."""

    def allocator_memory(self, index: int) -> dict[str, int]:
        """The CUDA caching allocator's bytes for device ``index``, when torch uses CUDA."""
        torch = _torch()
        if torch is None:
            return {}
        try:
            if not torch.cuda.is_available() or not torch.cuda.is_initialized():
                return {}
            return {
                "torch_allocated": int(torch.cuda.memory_allocated(index)),
                "torch_reserved": int(torch.cuda.memory_reserved(index)),
                "torch_peak_allocated": int(torch.cuda.max_memory_allocated(index)),
            }
        except Exception as exc:  # another process's device, a torch without CUDA
            log.debug("torch CUDA memory stats unavailable: %s", exc)
            return {}

    def versions(self) -> dict[str, str]:
        """``{"torch_version": ...}`` once torch is imported."""
        torch = _torch()
        return {} if torch is None else {"torch_version": str(torch.__version__)}

    def accelerators(self) -> list[dict[str, object]]:
        """The CUDA devices torch sees (none without CUDA or before torch is imported)."""
        torch = _torch()
        if torch is None or not torch.cuda.is_available():
            return []
        return [
            {
                "gpu_type": torch.cuda.get_device_name(i),
                "device_capability": list(torch.cuda.get_device_capability(i)),
            }
            for i in range(torch.cuda.device_count())
        ]

    def peak_memory(self, device: str | None) -> PeakMemory | None:
        """The CUDA allocator's peak, when ``device`` is a CUDA one (None: the default)."""
        torch = _torch()
        if torch is None or not torch.cuda.is_available():
            return None
        if device is not None and not str(device).startswith("cuda"):
            return None
        return _TorchPeak(torch)


class _TorchPeak:
    def __init__(self, torch: ModuleType) -> None:
        self._torch = torch

    def reset(self) -> None:
        self._torch.cuda.empty_cache()
        self._torch.cuda.reset_peak_memory_stats()

    def read(self) -> tuple[int, int]:
        cuda = self._torch.cuda
        total = cuda.get_device_properties(cuda.current_device()).total_memory
        return int(cuda.max_memory_allocated()), int(total)
