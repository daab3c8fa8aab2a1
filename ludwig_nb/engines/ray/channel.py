"""The per-run channel between rank 0 and the notebook: events one way, Stop/Pause the other.

On Ray it is a named async actor (:class:`ProgressChannel`, ``num_cpus=0``, in namespace
``ludwig_nb``, named after the run): rank 0 pushes batches of events fire-and-forget, the
driver thread long-polls them (``poll(cursor, timeout)``) and feeds the run's ``emit``; the
driver writes the run's stop/pause state into it and rank 0 reads it without blocking (one
outstanding request, ``ray.wait(timeout=0)``). Measured in DISTRIBUTED.md §3: 4-9 ms from
rank 0 to the notebook; ``ray.train.report`` per step was ~2 s per step, so it is not used.

In local mode (``num_workers: 0``) there is no Ray: :class:`LocalChannel` has the same
methods, thread-safe, and the worker code finds it by the same name.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.core import events as ev

__all__ = [
    "NAMESPACE",
    "ChannelClient",
    "EventBatcher",
    "LocalChannel",
    "ProgressChannel",
    "local_channel",
    "register_local_channel",
    "unregister_local_channel",
]

NAMESPACE = "ludwig_nb"
#: seconds between pushes of batched steps (a widget cannot render faster)
FLUSH_INTERVAL_S = 0.2


class _Store:
    """Events after an acknowledged cursor, the control state, and the workers' errors."""

    def __init__(self) -> None:
        self.base = 0  # cursor of events[0]
        self.events: list[Any] = []
        self.stop: str | None = None
        self.pause: str | None = None
        self.errors: list[dict[str, Any]] = []
        self.workers: dict[int, dict[str, Any]] = {}  # rank -> its end-of-run report
        self.starts: dict[int, int] = {}  # rank -> how often it started (restarts: > 1)

    def start(self, rank: int) -> int:
        self.starts[rank] = self.starts.get(rank, 0) + 1
        return self.starts[rank]

    def add(self, batch: list[Any]) -> None:
        self.events.extend(batch)

    def since(self, cursor: int) -> tuple[list[Any], int]:
        drop = max(0, min(cursor - self.base, len(self.events)))
        if drop:  # the driver has these: free them
            del self.events[:drop]
            self.base += drop
        return list(self.events), self.base + len(self.events)


class ProgressChannel:
    """The Ray actor (wrapped with ``ray.remote`` by the driver).

    Async: ``poll`` waits on a condition without blocking pushes.
    """

    def __init__(self) -> None:
        self._store = _Store()
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def push(self, batch: list[Any]) -> None:
        """Append a batch of events (rank 0, fire-and-forget) and wake the driver's poll."""
        self._store.add(batch)
        async with self._condition():
            self._condition().notify_all()

    async def poll(self, cursor: int, timeout: float) -> tuple[list[Any], int]:
        """The events after ``cursor`` and the new cursor, waiting up to ``timeout`` s for one."""
        changed = self._condition()
        async with changed:
            if self._store.base + len(self._store.events) <= cursor:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout)
        return self._store.since(cursor)

    async def set_control(self, stop: str | None, pause: str | None) -> None:
        """Set the run's stop and pause reasons (None: not stopped / not paused)."""
        self._store.stop, self._store.pause = stop, pause

    async def control(self) -> tuple[str | None, str | None]:
        """The run's ``(stop, pause)`` reasons."""
        return self._store.stop, self._store.pause

    async def report_error(self, error: dict[str, Any]) -> None:
        """Record a worker's error report."""
        self._store.errors.append(error)

    async def errors(self) -> list[dict[str, Any]]:
        """Every worker error reported so far."""
        return list(self._store.errors)

    async def started(self, rank: int) -> int:
        """Count a start of rank ``rank`` and return how often it started (> 1: restarted)."""
        return self._store.start(rank)

    async def report_worker(self, report: dict[str, Any]) -> None:
        """Record a rank's end-of-run report (its ``rank`` key says which)."""
        self._store.workers[int(report["rank"])] = report

    async def workers(self) -> list[dict[str, Any]]:
        """The ranks' end-of-run reports, by rank."""
        return [self._store.workers[r] for r in sorted(self._store.workers)]


class LocalChannel:
    """The in-process channel of local mode: the actor's methods, thread-safe, synchronous."""

    def __init__(self) -> None:
        self._store = _Store()
        self._changed = threading.Condition()

    def push(self, batch: list[Any]) -> None:
        """Append a batch of events and wake the driver's poll."""
        with self._changed:
            self._store.add(batch)
            self._changed.notify_all()

    def poll(self, cursor: int, timeout: float) -> tuple[list[Any], int]:
        """The events after ``cursor`` and the new cursor, waiting up to ``timeout`` s for one."""
        with self._changed:
            if self._store.base + len(self._store.events) <= cursor:
                self._changed.wait(timeout)
            return self._store.since(cursor)

    def set_control(self, stop: str | None, pause: str | None) -> None:
        """Set the run's stop and pause reasons (None: not stopped / not paused)."""
        with self._changed:
            self._store.stop, self._store.pause = stop, pause

    def control(self) -> tuple[str | None, str | None]:
        """The run's ``(stop, pause)`` reasons."""
        with self._changed:
            return self._store.stop, self._store.pause

    def report_error(self, error: dict[str, Any]) -> None:
        """Record a worker's error report."""
        with self._changed:
            self._store.errors.append(error)

    def errors(self) -> list[dict[str, Any]]:
        """Every worker error reported so far."""
        with self._changed:
            return list(self._store.errors)

    def started(self, rank: int) -> int:
        """Count a start of rank ``rank`` and return how often it started (> 1: restarted)."""
        with self._changed:
            return self._store.start(rank)

    def report_worker(self, report: dict[str, Any]) -> None:
        """Record a rank's end-of-run report (its ``rank`` key says which)."""
        with self._changed:
            self._store.workers[int(report["rank"])] = report

    def workers(self) -> list[dict[str, Any]]:
        """The ranks' end-of-run reports, by rank."""
        with self._changed:
            return [self._store.workers[r] for r in sorted(self._store.workers)]


_LOCAL: dict[str, LocalChannel] = {}
_LOCAL_LOCK = threading.Lock()


def register_local_channel(name: str) -> LocalChannel:
    """Create the in-process channel of run ``name`` (local mode), replacing any earlier one."""
    with _LOCAL_LOCK:
        channel = _LOCAL[name] = LocalChannel()
    return channel


def unregister_local_channel(name: str) -> None:
    """Forget run ``name``'s in-process channel; unknown names are ignored."""
    with _LOCAL_LOCK:
        _LOCAL.pop(name, None)


def local_channel(name: str) -> LocalChannel | None:
    """The in-process channel of run ``name``, or None when none is registered."""
    with _LOCAL_LOCK:
        return _LOCAL.get(name)


class ChannelClient:
    """A worker's side of the channel, found by the run's name.

    The actor on Ray, the :class:`LocalChannel` in local mode. ``push`` never waits for the other
    side.
    """

    def __init__(self, name: str) -> None:
        self._local = local_channel(name)
        self._actor: Any = None
        self._pending: Any = None  # the one outstanding control() request (Ray)
        self._last: tuple[str | None, str | None] = (None, None)
        if self._local is None:
            import ray

            self._actor = ray.get_actor(name, namespace=NAMESPACE)

    def push(self, batch: list[Any]) -> None:
        """Send a batch of events without waiting (fire-and-forget on Ray)."""
        if self._local is not None:
            self._local.push(batch)
        else:
            self._actor.push.remote(batch)  # fire-and-forget: the ref is dropped

    def report_error(self, error: dict[str, Any]) -> None:
        """Send a worker's error report and wait (up to 10 s on Ray) until the channel has it."""
        if self._local is not None:
            self._local.report_error(error)
            return
        import ray

        ray.get(self._actor.report_error.remote(error), timeout=10)

    def started(self, rank: int) -> int:
        """Count this rank's start; more than 1 means Ray Train restarted the workers."""
        if self._local is not None:
            return self._local.started(rank)
        import ray

        count: int = ray.get(self._actor.started.remote(rank), timeout=30)
        return count

    def report_worker(self, report: dict[str, Any]) -> None:
        """This rank's end-of-run report (host, device, steps/s, parameter digest)."""
        if self._local is not None:
            self._local.report_worker(report)
            return
        import ray

        ray.get(self._actor.report_worker.remote(report), timeout=30)

    def control_nowait(self) -> tuple[str | None, str | None]:
        """The latest (stop reason, pause reason) known, without waiting for the actor."""
        if self._local is not None:
            return self._local.control()
        import ray

        if self._pending is None:
            self._pending = self._actor.control.remote()
        ready, _ = ray.wait([self._pending], timeout=0)
        if ready:
            self._last = ray.get(self._pending)
            self._pending = self._actor.control.remote()
        return self._last

    def control_wait(self, timeout: float) -> tuple[str | None, str | None]:
        """The control state, waiting up to ``timeout`` s for the actor (while paused)."""
        if self._local is not None:
            time.sleep(timeout)
            return self._local.control()
        import ray

        if self._pending is None:
            self._pending = self._actor.control.remote()
        ready, _ = ray.wait([self._pending], timeout=timeout)
        if ready:
            self._last = ray.get(self._pending)
            self._pending = None
        return self._last


class EventBatcher:
    """Rank 0's ``emit``.

    Steps are batched and pushed every ``interval`` s; any other event (run started, evaluation,
    pause, the end) pushes at once, with what is queued.

    Args:
        push: Sends one batch of events to the channel.
        interval: Seconds between pushes of batched steps.
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        push: Callable[[list[Any]], None],
        interval: float = FLUSH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._push, self._interval, self._clock = push, interval, clock
        self._queue: list[Any] = []
        self._last = clock()

    def __call__(self, event: ev.Event) -> None:
        """Queue ``event``; push now unless it is a step within ``interval`` s of the last push."""
        self._queue.append(event)
        now = self._clock()
        if not isinstance(event, ev.StepFinished) or now - self._last >= self._interval:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        """Push what is queued; ``now`` (monotonic s) is the push time, default the clock's."""
        if self._queue:
            batch, self._queue = self._queue, []
            self._push(batch)
        self._last = self._clock() if now is None else now
