"""How a run on Ray ends badly: a worker failed, or a second Stop killed the job."""

from __future__ import annotations

__all__ = ["RunKilled", "WorkerFailed"]


class WorkerFailed(RuntimeError):
    """A Ray Train worker raised or died; the message names its rank and host."""


class RunKilled(RuntimeError):
    """A second Stop cancelled the Ray job; the message says where the last checkpoint is."""
