"""The :class:`~ludwig_nb.core.control.Control` a Ray Train worker hands the training loop.

Rank 0 reads the run's stop/pause state and the throttle's duty cycle from the channel
without blocking; at every step boundary all ranks agree on them with one 3-element
``all_reduce(MAX)`` (gloo on CPU, NCCL on GPU; the duty travels as ``1 - duty``, so the
most throttled wins), so that every rank stops, pauses and resumes before the same step,
none is left waiting in a collective, and every rank idles the same share of the time
(:meth:`WorkerControl.pace`, the same rule as ``RunControl.pace``). While paused, the ranks
keep agreeing every ``pause_poll`` s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.core.control import StopRequested

__all__ = ["WorkerControl", "torch_agree"]

#: (stop reason, pause reason, duty); a reader without a throttle may leave the duty out
State = tuple[str | None, str | None, float] | tuple[str | None, str | None]


class WorkerControl:
    """A Ray worker's view of the run's control, agreed across ranks.

    ``read_now()`` / ``read_wait(timeout)`` give rank 0's view (other ranks pass functions
    returning ``(None, None, 1.0)``); ``agree([stop, pause, 1 - duty])`` is the all-reduce
    (None on a single rank).

    Args:
        read_now: Rank 0's ``(stop, pause, duty)`` now, without waiting.
        read_wait: Rank 0's ``(stop, pause, duty)``, waiting up to the given seconds.
        agree: The all-reduce (MAX) of ``[stop, pause, 1 - duty]`` across ranks; None on a
            single rank.
        pause_poll: Seconds between reads of the control while paused.
        clock: Monotonic seconds, for the pacing.
        sleep: How the pacing idles (seconds).
    """

    def __init__(
        self,
        read_now: Callable[[], State],
        read_wait: Callable[[float], State],
        agree: Callable[[list[float]], list[float]] | None = None,
        pause_poll: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._read_now, self._read_wait, self._agree = read_now, read_wait, agree
        self._pause_poll = pause_poll
        self._clock, self._sleep = clock, sleep
        self._stop: str | None = None
        self._pause: str | None = None
        self._duty = 1.0
        self._pace_mark: float | None = None
        #: idle seconds :meth:`pace` inserted so far
        self.idle_seconds = 0.0

    def _update(self, state: State) -> None:
        stop, pause = state[0], state[1]
        duty = float(state[2]) if len(state) > 2 else 1.0  # the duty, when sent
        if self._agree is not None:
            agreed = self._agree([1.0 if stop else 0.0, 1.0 if pause else 0.0, 1.0 - duty])
            stop = (stop or "user") if agreed[0] else None
            pause = (pause or "user") if agreed[1] else None
            duty = 1.0 - agreed[2]
        if stop is not None and self._stop is None:
            self._stop = stop
        self._pause = pause
        self._duty = min(1.0, max(0.01, float(duty)))

    @property
    def stop_requested(self) -> bool:
        """Whether rank 0 (or, agreed, any rank) saw a stop."""
        return self._stop is not None

    @property
    def stop_reason(self) -> str | None:
        """The stop's reason; None without a stop."""
        return self._stop

    @property
    def paused(self) -> bool:
        """Whether the run is paused (and not stopping)."""
        return self._pause is not None and self._stop is None

    @property
    def duty(self) -> float:
        """The duty cycle the ranks last agreed on (1.0: not throttled)."""
        return self._duty

    def pace(self, max_idle: float = 10.0) -> float:
        """Idle for the agreed duty cycle's share of the time worked since the last call.

        Called at a step boundary (before :meth:`checkpoint`). Every rank applies the same
        duty to nearly the same work time (DDP keeps them in step), so none waits long for
        the others.

        Args:
            max_idle: The most seconds idled at one boundary.

        Returns:
            The seconds idled.
        """
        now = self._clock()
        mark, duty = self._pace_mark, self._duty
        idle = 0.0
        if mark is not None and duty < 1.0 and not self.paused and self._stop is None:
            idle = min(max_idle, max(0.0, now - mark) * (1.0 - duty) / duty)
        if idle > 0.0:
            self._sleep(idle)
            self.idle_seconds += idle
        self._pace_mark = self._clock()
        return idle

    def checkpoint(self) -> None:
        """Read the control now and raise :class:`StopRequested` when a stop was asked for."""
        self._update(self._read_now())
        if self._stop is not None:
            raise StopRequested(self._stop)

    def wait_while_paused(
        self,
        on_pause: Callable[[str], None] | None = None,
        on_resume: Callable[[str], None] | None = None,
    ) -> None:
        """Block while paused, re-reading the control every ``pause_poll`` s (see ``Control``)."""
        if not self.paused:
            return
        reason = self._pause or "user"
        if on_pause is not None:
            on_pause(reason)
        while self.paused:
            self._update(self._read_wait(self._pause_poll))
        self._pace_mark = self._clock()  # a pause is not work
        if on_resume is not None:
            on_resume(reason)


def torch_agree(device: Any) -> Callable[[list[float]], list[float]]:
    """``all_reduce(MAX)`` over the default process group, on ``device`` (NCCL needs CUDA)."""
    import torch
    import torch.distributed as dist

    def agree(values: list[float]) -> list[float]:
        tensor = torch.tensor(values, dtype=torch.float32, device=device)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return [float(v) for v in tensor.tolist()]

    return agree
