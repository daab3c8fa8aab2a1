"""The search's channel: one named async Ray actor per Tune experiment.

Per trial (by Tune trial id) it holds the notebook's assignment (the trial's run folder and
config), the trial's events until the notebook has read them, its stop and pause requests,
and its end. The trials push events without waiting; the notebook long-polls. The actor
asks for no CPU (``num_cpus=0``), so every CPU of the Ray goes to trials.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["TuneChannel", "ray_get"]


def ray_get(ref: Any, timeout: float = 60.0) -> Any:
    """``ray.get`` with a timeout (an actor call of the driver never hangs the search).

    Raises:
        ray.exceptions.GetTimeoutError: no answer within ``timeout`` seconds.
    """
    import ray

    return ray.get(ref, timeout=timeout)


@dataclasses.dataclass
class _Trial:
    events: list[Any] = dataclasses.field(default_factory=list)
    base: int = 0
    assignment: dict[str, Any] | None = None
    stop: str | None = None
    pause: str | None = None
    ended: bool = False
    error: str | None = None


class TuneChannel:
    """The search's Ray actor (wrapped with ``ray.remote`` by the driver).

    Per trial (by Tune trial id) its assignment, its events, its stop/pause state and its end.
    """

    def __init__(self) -> None:
        self._trials: dict[str, _Trial] = {}
        self._changed: asyncio.Condition | None = None

    def _trial(self, tune_id: str) -> _Trial:
        return self._trials.setdefault(tune_id, _Trial())

    async def _notify(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            self._changed.notify_all()

    async def _wait(self, ready: Callable[[], bool], timeout: float) -> None:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            if not ready():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait_for(ready), timeout)

    async def assign(self, tune_id: str, assignment: dict[str, Any]) -> None:
        """The notebook's answer to a trial's start (see ``TuneHooks.start_trial``)."""
        self._trial(tune_id).assignment = assignment
        await self._notify()

    async def assignment(self, tune_id: str, timeout: float) -> dict[str, Any] | None:
        """The trial's assignment, waiting up to ``timeout`` s for it."""
        trial = self._trial(tune_id)
        await self._wait(lambda: trial.assignment is not None, timeout)
        return trial.assignment

    async def push(self, tune_id: str, batch: list[Any]) -> None:
        """A trial's events, in order."""
        self._trial(tune_id).events.extend(batch)
        await self._notify()

    async def poll(
        self, tune_id: str, cursor: int, timeout: float
    ) -> tuple[list[Any], int, bool, str | None]:
        """Events after ``cursor``, waiting up to ``timeout`` s for one.

        Returns the events, the new cursor, whether the trial has ended, and its error.
        """
        trial = self._trial(tune_id)
        await self._wait(lambda: trial.base + len(trial.events) > cursor or trial.ended, timeout)
        drop = max(0, min(cursor - trial.base, len(trial.events)))
        if drop:  # the notebook has these: free them
            del trial.events[:drop]
            trial.base += drop
        return list(trial.events), trial.base + len(trial.events), trial.ended, trial.error

    async def set_control(self, tune_id: str, stop: str | None, pause: str | None) -> None:
        """The trial's stop and pause requests (from its mirror run, or a prune)."""
        trial = self._trial(tune_id)
        trial.stop = trial.stop or stop
        trial.pause = pause
        await self._notify()

    async def control(self, tune_id: str) -> tuple[str | None, str | None]:
        """(stop reason, pause reason) of the trial."""
        trial = self._trial(tune_id)
        return trial.stop, trial.pause

    async def end(self, tune_id: str, error: str | None) -> None:
        """The trial is over (from the trial itself, or from Tune on the driver)."""
        trial = self._trial(tune_id)
        trial.ended = True
        trial.error = trial.error or error
        await self._notify()
