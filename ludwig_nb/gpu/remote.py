"""``RemoteSampler``: a sampler whose snapshots are read elsewhere and fed in.

The snapshots come from the nodes of a Ray run's workers, not from this machine.

It has the sampler's reader side (``latest``, ``history``, ``subscribe``), so the dashboard's
gauges, the resource profile and the alarm watch use it unchanged; it has no thread and
touches no driver. Each :meth:`RemoteSampler.feed` stores one merged snapshot of the run's
GPUs (each tagged with its host) and notifies the subscribers on the calling thread.
"""

from __future__ import annotations

from ludwig_nb.core.gpu_sample import Snapshot
from ludwig_nb.gpu.sampler import Sampler

__all__ = ["WAITING_REASON", "RemoteSampler"]

WAITING_REASON = "waiting for the workers' GPU readings"


class RemoteSampler(Sampler):
    """A :class:`~ludwig_nb.gpu.sampler.Sampler` fed by the engine (``feed``, any thread).

    Args:
        interval: The nodes' sampling interval in seconds (>= 0.25), for readers that
            pace on it.
        history_capacity: Points kept per series.
    """

    def __init__(self, interval: float = 1.0, history_capacity: int = 1200) -> None:
        super().__init__(None, None, interval, history_capacity=history_capacity)

    @property
    def gpu_available(self) -> bool:
        """True once a fed snapshot held a GPU."""
        latest = self.latest()
        return latest is not None and bool(latest.gpus)

    @property
    def reason(self) -> str:
        """Why there are no GPU readings ("" when there are)."""
        latest = self.latest()
        if latest is None:
            return WAITING_REASON
        return "" if latest.gpus else latest.reason

    def feed(self, snapshot: Snapshot) -> None:
        """Store ``snapshot`` as the latest, add it to the history, notify subscribers."""
        self._publish(snapshot)

    def sample_once(self) -> Snapshot:
        """The latest fed snapshot (nothing is read here); an empty one before the first."""
        latest = self.latest()
        return latest if latest is not None else Snapshot(time=self._clock(), reason=WAITING_REASON)

    def start(self) -> None:
        """No thread: the snapshots are fed."""

    def run(self, ticks: int | None = None) -> None:
        """No thread: the snapshots are fed."""
        del ticks
