"""The server's GPU telemetry: one sampler thread, started lazily, read as a cached value.

NVML is never called on the Tornado event loop: :meth:`GpuFeed.start` (which builds the
NVML source and starts the sampler thread) runs in an executor thread, and
:meth:`GpuFeed.snapshot` only reads the sampler's latest-value slot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ludwig_nb.core.gpu_sample import Snapshot

__all__ = ["GpuFeed", "SamplerLike", "SourceLike", "default_sampler_factory"]


class SourceLike(Protocol):
    """The part of ``ludwig_nb.gpu.NvmlSource`` the feed reads (both may touch NVML)."""

    @property
    def available(self) -> bool:
        """Whether the source can read GPUs."""

    @property
    def reason(self) -> str | None:
        """Why the source is unavailable; None or ``""`` when available."""


class SamplerLike(Protocol):
    """The part of ``ludwig_nb.gpu.Sampler`` the feed drives."""

    def start(self) -> None:
        """Start sampling in a background thread."""

    def stop(self) -> None:
        """Stop sampling."""

    def latest(self) -> Snapshot | None:
        """The latest snapshot; None before the first."""


#: builds ``(sampler, gpu source)``; may touch NVML, so it is only called off the loop
SamplerFactory = Callable[[], tuple[SamplerLike, SourceLike]]


def default_sampler_factory(interval: float = 1.0) -> tuple[SamplerLike, SourceLike]:
    """``Sampler(NvmlSource(), HostSource())`` from :mod:`ludwig_nb.gpu`."""
    from ludwig_nb.gpu import HostSource, NvmlSource, Sampler

    source = NvmlSource()
    return Sampler(source, HostSource(), interval=interval), source


class GpuFeed:
    """Owns the server-side sampler; thread-safe; ``start`` is idempotent.

    Args:
        factory: Makes the sampler on the first ``start``.
    """

    def __init__(self, factory: SamplerFactory = default_sampler_factory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._sampler: SamplerLike | None = None
        self._available = False
        self._reason: str | None = "GPU sampler not started"
        self._closed = False

    @property
    def started(self) -> bool:
        """Whether the sampler was started."""
        return self._sampler is not None

    def start(self) -> None:
        """Build and start the sampler (blocking; call it from an executor thread).

        A failure to build it (no ``ludwig_nb.gpu``, a broken driver) is reported through
        :meth:`snapshot` as ``available: false`` with the reason; it never raises.
        """
        with self._lock:
            if self._sampler is not None or self._closed:
                return
            try:
                sampler, source = self._factory()
                sampler.start()
            except Exception as exc:
                self._reason = f"GPU telemetry failed to start: {type(exc).__name__}: {exc}"
                self._closed = True  # do not retry on every request
                return
            self._sampler = sampler
            self._available = bool(getattr(source, "available", False))
            self._reason = None if self._available else getattr(source, "reason", None)

    def snapshot(self) -> dict[str, object]:
        """``{"gpus": [...], "host": {...} | None, "available", "reason", "time"}``."""
        sampler = self._sampler
        latest = sampler.latest() if sampler is not None else None
        if latest is None:
            return {
                "gpus": [],
                "host": None,
                "available": self._available,
                "reason": self._reason or None,
                "time": None,
            }
        return {
            "gpus": [g.to_dict() for g in latest.gpus],
            "host": latest.host.to_dict() if latest.host is not None else None,
            "available": self._available,
            "reason": self._reason or latest.reason or None,
            "time": latest.time,
        }

    def close(self) -> None:
        """Stop the sampler thread (server shutdown); later ``start`` calls do nothing."""
        with self._lock:
            self._closed = True
            sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.stop()
