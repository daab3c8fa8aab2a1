"""How a run on Ray ends badly: Ray did not start, a worker failed, a second Stop killed it."""

from __future__ import annotations

__all__ = ["RayNotStarted", "RunKilled", "WorkerFailed"]


class RayNotStarted(RuntimeError):
    """Ray did not start here, or its cluster did not answer; the message says what to do."""


class WorkerFailed(RuntimeError):
    """A Ray Train worker raised or died; the message names its rank and host."""


class RunKilled(RuntimeError):
    """A second Stop cancelled the Ray job; the message says where the last checkpoint is."""
