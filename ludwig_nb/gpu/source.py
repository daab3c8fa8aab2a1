"""``GpuSource``: what the sampler needs from anything that reads GPUs."""

from __future__ import annotations

from typing import Protocol

from ludwig_nb.core.gpu_sample import GpuSample

__all__ = ["GpuSource"]


class GpuSource(Protocol):
    """NVML, a simulated GPU, or a test double.

    ``available`` is False (and ``reason`` says why, in one line) when there is nothing to
    read; ``sample()`` then returns ``[]``. ``sample()`` never raises.
    """

    @property
    def available(self) -> bool:
        """Whether the source can read GPUs."""

    @property
    def reason(self) -> str:
        """Why the source is unavailable (for the user); ``""`` when available."""

    def sample(self) -> list[GpuSample]:
        """Read every GPU now; empty when unavailable."""

    def close(self) -> None:
        """Release the source (idempotent)."""
