"""``Sampler``: one thread that reads the GPUs and the host at a fixed rate.

Readers never call NVML: they read the latest-value slot (:meth:`Sampler.latest`, under a
lock) or the bounded history (:meth:`Sampler.history`), and the alarm watch subscribes to
every snapshot (:meth:`Sampler.subscribe`; callbacks run on the sampler thread and must be
quick). Ticks follow fixed deadlines (``start + k * interval``): a slow read does not shift
the phase, and ticks missed while the process was stalled are skipped, not burst.

No thread exists until :meth:`Sampler.start`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.core.series import SeriesTable
from ludwig_nb.gpu.host import HostSource
from ludwig_nb.gpu.source import GpuSource

__all__ = ["GPU_METRICS", "HOST_METRICS", "MIN_INTERVAL", "Sampler"]

log = logging.getLogger(__name__)

MIN_INTERVAL = 0.25  # seconds
GPU_METRICS = (
    "utilization_gpu",
    "memory_percent",
    "temperature",
    "power_draw",
    "clock_sm",
    "process_memory",
    "sm_activity",
    "tensor_activity",
)
#: kept only once a GPU reports them (GPM, Hopper and newer): no history of gaps elsewhere
_SPARSE_METRICS = frozenset({"sm_activity", "tensor_activity"})
HOST_METRICS = ("cpu_percent", "memory_percent")

Subscriber = Callable[[Snapshot], object]


class Sampler:
    """Samples ``gpu_source`` (None: host only) and ``host_source`` every ``interval`` s.

    ``clock``: seconds used for deadlines and snapshot times (default ``time.time``);
    ``sleep``: how the thread waits (default: an event wait that ``stop()`` interrupts).
    Raises ``ValueError`` for an interval under 0.25 s.

    Args:
        gpu_source: Reads the GPUs; None samples the host only.
        host_source: Reads the host; None leaves it out.
        interval: Seconds between ticks (at least 0.25).
        clock: Seconds for deadlines and snapshot times.
        sleep: How the thread waits.
        history_capacity: Points kept per series (device and metric) in the finest history tier.
    """

    def __init__(
        self,
        gpu_source: GpuSource | None,
        host_source: HostSource | None = None,
        interval: float = 1.0,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] | None = None,
        history_capacity: int = 1200,
    ) -> None:
        self.gpu_source = gpu_source
        self.host_source = host_source
        self._interval = _checked(interval)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._latest: Snapshot | None = None
        self._history = SeriesTable(capacity=history_capacity)
        self._subscribers: list[Subscriber] = []
        self._failed_subscribers: set[int] = set()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.ticks = 0

    # -- settings --------------------------------------------------------------------
    @property
    def interval(self) -> float:
        """Seconds between ticks (>= 0.25); setting it applies from the next tick."""
        return self._interval

    @interval.setter
    def interval(self, value: float) -> None:
        self._interval = _checked(value)

    @property
    def gpu_available(self) -> bool:
        """True when the GPU source has GPUs to read (may initialise NVML on first use)."""
        return self.gpu_source is not None and self.gpu_source.available

    @property
    def reason(self) -> str:
        """Why there are no GPU readings, in one line ("" when there are)."""
        if self.gpu_source is None:
            return "no GPU source"
        return "" if self.gpu_source.available else self.gpu_source.reason

    # -- readers ---------------------------------------------------------------------
    def latest(self) -> Snapshot | None:
        """The newest snapshot, or None before the first tick."""
        with self._lock:
            return self._latest

    def history(
        self, metric: str, device: int | None = None, since: float | None = None
    ) -> list[tuple[float, float]]:
        """``(time, value)`` pairs, oldest first; older points are averages.

        ``device``: a GPU index (metrics in ``GPU_METRICS``) or None for the host
        (``HOST_METRICS``). ``since``: seconds on the sampler's clock. NaN marks a gap.
        """
        with self._lock:
            series = self._history.get((_key(device), metric))
            return [] if series is None else series.points(since)

    def history_columns(
        self, metric: str, device: int | None = None, since: float | None = None
    ) -> tuple[list[float], list[float]]:
        """Like :meth:`history` but as ``(times, values)`` lists (what plots want)."""
        with self._lock:
            series = self._history.get((_key(device), metric))
            return ([], []) if series is None else series.columns(since)

    @property
    def history_nbytes(self) -> int:
        """Bytes held by the history's points."""
        with self._lock:
            return self._history.nbytes

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(snapshot)`` after every tick (on the sampler thread).

        Returns a function that unsubscribes. A callback that raises is logged once and kept.
        """
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    # -- one tick --------------------------------------------------------------------
    def sample_once(self) -> Snapshot:
        """Read everything now, store it, notify subscribers; never raises."""
        now = self._clock()
        gpus: list[GpuSample] = []
        reason = ""
        if self.gpu_source is None:
            reason = "no GPU source"
        else:
            try:
                gpus = self.gpu_source.sample()
                reason = "" if gpus else (self.gpu_source.reason or "no GPU found")
            except Exception as exc:  # the sources promise not to raise; belt and braces
                reason = f"GPU sampling failed: {exc}"
        host = None if self.host_source is None else self.host_source.sample()
        snapshot = Snapshot(time=now, gpus=tuple(gpus), host=host, reason=reason)
        self._publish(snapshot)
        return snapshot

    def _publish(self, snapshot: Snapshot) -> None:
        """Store ``snapshot`` as the latest, add it to the history, notify the subscribers."""
        with self._lock:
            self._latest = snapshot
            self._record(snapshot)
            subscribers = list(self._subscribers)
            self.ticks += 1
        for callback in subscribers:
            self._notify(callback, snapshot)

    def _record(self, snapshot: Snapshot) -> None:
        for gpu in snapshot.gpus:
            key = _key(gpu.index, gpu.mig_index)
            for metric in GPU_METRICS:
                value = getattr(gpu, metric)
                sparse = value is None and metric in _SPARSE_METRICS
                if sparse and self._history.get((key, metric)) is None:
                    continue  # a GPU without GPM: no series of gaps
                self._history.append((key, metric), snapshot.time, value)
        if snapshot.host is not None:
            host: HostSample = snapshot.host
            self._history.append(("host", "cpu_percent"), snapshot.time, host.cpu_percent)
            self._history.append(("host", "memory_percent"), snapshot.time, host.memory_percent)

    def _notify(self, callback: Subscriber, snapshot: Snapshot) -> None:
        try:
            callback(snapshot)
        except Exception:
            if id(callback) not in self._failed_subscribers:  # once, not every second
                self._failed_subscribers.add(id(callback))
                log.exception("ludwig_nb: a GPU sampler subscriber failed")

    # -- the thread ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether the sampling thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the sampling thread (idempotent)."""
        if self.running:
            return
        self._stopped.clear()
        self._thread = threading.Thread(
            target=self._loop, name="ludwig_nb-gpu-sampler", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait up to ``timeout`` seconds for it (idempotent)."""
        self._stopped.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def run(self, ticks: int | None = None) -> None:
        """Sample on the fixed-rate schedule in the calling thread.

        Until ``stop()`` (or ``ticks`` ticks). The thread runs this; tests call it with a virtual
        clock.
        """
        deadline = self._clock()
        done = 0
        while not self._stopped.is_set() and (ticks is None or done < ticks):
            self.sample_once()
            done += 1
            if ticks is not None and done >= ticks:
                break
            deadline = _next_deadline(deadline, self._interval, self._clock())
            self._wait(deadline - self._clock())

    def _loop(self) -> None:
        try:
            self.run()
        except Exception:  # never expected: sample_once does not raise
            log.exception("ludwig_nb: the GPU sampler stopped")

    def _wait(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopped.wait(seconds)


def _next_deadline(previous: float, interval: float, now: float) -> float:
    """The next tick after ``now`` on the grid ``previous + k * interval`` (k >= 1)."""
    deadline = previous + interval
    if deadline <= now:  # fell behind: skip the missed ticks, keep the phase
        deadline += math.ceil((now - deadline) / interval + 1e-9) * interval
    return deadline


def _checked(interval: float) -> float:
    if not interval >= MIN_INTERVAL:
        raise ValueError(f"interval must be at least {MIN_INTERVAL} s, got {interval}")
    return float(interval)


def _key(index: int | None, mig: int | None = None) -> str:
    if index is None:
        return "host"
    return f"gpu{index}" if mig is None else f"gpu{index}.mig{mig}"
