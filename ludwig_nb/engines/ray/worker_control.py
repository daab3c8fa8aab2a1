"""The :class:`~ludwig_nb.core.control.Control` a Ray Train worker hands the training loop.

Rank 0 reads the run's stop/pause state from the channel without blocking; at every step
boundary all ranks agree on it with one 2-element ``all_reduce(MAX)`` (gloo on CPU, NCCL on
GPU), so that every rank stops, pauses and resumes before the same step and none is left
waiting in a collective. While paused, the ranks keep agreeing every ``pause_poll`` s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ludwig_nb.core.control import StopRequested

__all__ = ["WorkerControl", "torch_agree"]

State = tuple[str | None, str | None]  # (stop reason, pause reason)


class WorkerControl:
    """A Ray worker's view of the run's control, agreed across ranks.

    ``read_now()`` / ``read_wait(timeout)`` give rank 0's view (other ranks pass functions returning
    ``(None, None)``); ``agree([stop, pause])`` is the all-reduce (None on a single rank).

    Args:
        read_now: Rank 0's ``(stop, pause)`` now, without waiting.
        read_wait: Rank 0's ``(stop, pause)``, waiting up to the given seconds for a change.
        agree: The all-reduce of ``[stop, pause]`` flags across ranks; None on a single rank.
        pause_poll: Seconds between reads of the control while paused.
    """

    def __init__(
        self,
        read_now: Callable[[], State],
        read_wait: Callable[[float], State],
        agree: Callable[[list[float]], list[float]] | None = None,
        pause_poll: float = 0.25,
    ) -> None:
        self._read_now, self._read_wait, self._agree = read_now, read_wait, agree
        self._pause_poll = pause_poll
        self._stop: str | None = None
        self._pause: str | None = None

    def _update(self, state: State) -> None:
        stop, pause = state
        if self._agree is not None:
            agreed = self._agree([1.0 if stop else 0.0, 1.0 if pause else 0.0])
            stop = (stop or "user") if agreed[0] else None
            pause = (pause or "user") if agreed[1] else None
        if stop is not None and self._stop is None:
            self._stop = stop
        self._pause = pause

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

    def pace(self, max_idle: float = 10.0) -> float:
        """Pace the worker: a no-op on Ray for now; returns 0 s.

        The throttle's duty cycle does not reach Ray workers yet (each worker's node would need its
        own GPU watch): no idle time is inserted; returns 0 s.
        """
        del max_idle
        return 0.0

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
