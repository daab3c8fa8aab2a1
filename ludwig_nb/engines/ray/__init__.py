"""``engine: ray``: the built-in engine's training loop on Ray Train workers (the ``[ray]`` extra).

Imported lazily: Ray loads only when a run uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.engines.ray.backend import RayBackend
    from ludwig_nb.engines.ray.engine import RayEngine
    from ludwig_nb.engines.ray.errors import RayNotStarted, RunKilled, WorkerFailed

__all__ = ["RayBackend", "RayEngine", "RayNotStarted", "RunKilled", "WorkerFailed"]

_WHERE = {
    "RayBackend": "ludwig_nb.engines.ray.backend",
    "RayEngine": "ludwig_nb.engines.ray.engine",
    "RayNotStarted": "ludwig_nb.engines.ray.errors",
    "RunKilled": "ludwig_nb.engines.ray.errors",
    "WorkerFailed": "ludwig_nb.engines.ray.errors",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
