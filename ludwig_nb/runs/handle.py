"""The typed handle every view reads a run through (dashboard, text view, CLI follower).

A run keeps one :class:`~ludwig_nb.core.state.RunState` and one ETA estimator, reduced once
per event on the emitting thread (:class:`~ludwig_nb.runs.ledger.RunLedger`); views never
fold events into a state or an ETA of their own. They drain an :class:`EventFeed` for what
only they draw (curves, throughput) and read the state that feed saw, so a frame's numbers
and its curves agree. The GPU sampler is not part of the handle: it reaches a view as an
argument.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ludwig_nb.core import events as ev
    from ludwig_nb.core.early_stop import StopForecast
    from ludwig_nb.core.eta import Estimate
    from ludwig_nb.core.state import RunState

__all__ = ["EtaReading", "EventFeed", "RunHandle"]


@dataclasses.dataclass(frozen=True)
class EtaReading:
    """The run's one ETA at a wall-clock time.

    ``estimate``: the estimator's (seconds from then), None before it has a basis.
    ``early_stopping``: the config stops early, so the total is an upper bound.
    ``forecast``: where early stopping likely ends the run (None: not yet, or off).
    ``first_finish``: wall-clock seconds of the first finish the estimator predicted once
    the run was stable (the summary compares the time taken with it), None until then.
    ``deadline``: the run's deadline against this estimate (``{"at", "label", "action",
    "verdict", "text"}``, ``core/deadline.py``), None without a deadline.
    """

    estimate: Estimate | None = None
    early_stopping: bool = False
    forecast: StopForecast | None = None
    first_finish: float | None = None
    deadline: Mapping[str, object] | None = None


class EventFeed(Protocol):
    """A reader's position in a run's events."""

    def drain(self) -> list[ev.Event]:
        """The events since the last drain, in order (empty once closed)."""
        ...

    def skip(self) -> None:
        """Move past every event so far without reading them (``state``: the latest)."""
        ...

    def close(self) -> None:
        """Stop reading; later drains return nothing."""
        ...

    @property
    def state(self) -> RunState:
        """The run's state as of the last drained event."""
        ...


class RunHandle(Protocol):
    """What a view may read of a run, and the three buttons it may press."""

    @property
    def id(self) -> str:
        """The run id (name, date, time, random suffix)."""
        ...

    @property
    def name(self) -> str:
        """The name the user gave."""
        ...

    @property
    def engine_name(self) -> str:
        """The engine training it ("builtin", "ludwig", "ray")."""
        ...

    @property
    def directory(self) -> Path:
        """The run directory."""
        ...

    @property
    def traceback_text(self) -> str:
        """The failed run's traceback ("" otherwise)."""
        ...

    @property
    def device_index(self) -> int | None:
        """The GPU it trains on, as the latest ``RunStarted`` says (None: CPU or not yet)."""
        ...

    @property
    def profile_summary(self) -> Mapping[str, object]:
        """Per-phase resource figures (``{}`` without a profile)."""
        ...

    @property
    def state(self) -> RunState:
        """The run's state now."""
        ...

    def subscribe(self) -> EventFeed:
        """A feed of every event from the start."""
        ...

    def eta_reading(self, now: float) -> EtaReading:
        """The run's ETA at wall-clock ``now`` (seconds)."""
        ...

    def stop(self, reason: str = "user") -> None:
        """Stop gracefully at the next step boundary."""
        ...

    def pause(self, reason: str = "user") -> None:
        """Pause at the next step boundary."""
        ...

    def resume(self, reason: str | None = None) -> None:
        """Resume a paused run."""
        ...
