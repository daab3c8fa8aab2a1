"""``RunLedger``: a run's events and everything reduced from them, once per event.

One per run (:class:`~ludwig_nb.runs.run.Run` owns it): the event log, the
:class:`~ludwig_nb.core.state.RunState`, the ETA tracker, the early-stopping watch and the
GPU the run trains on (from ``RunStarted``; a later ``RunStarted``, as on a resume,
replaces it), and the hindsight that words what went wrong with the kept model (added to
``RunFinished`` by :meth:`RunLedger.completed`). ``append`` is called on the emitting thread;
views read through :meth:`subscribe` and :meth:`eta_reading` (the
:class:`~ludwig_nb.runs.handle.RunHandle` protocol) and never reduce an event themselves.
Stdlib and core only.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.early_stop import EarlyStopWatch
from ludwig_nb.core.eta import Estimate, EtaTracker
from ludwig_nb.core.event_log import EventLog
from ludwig_nb.core.hindsight import Hindsight
from ludwig_nb.core.state import RunState, reduce_state
from ludwig_nb.runs.handle import EtaReading

__all__ = ["EventSubscription", "RunLedger", "auto_batch_note", "device_index_of"]


def auto_batch_note(config: Mapping[str, Any], schedule: ev.ScheduleInfo) -> str:
    """What to tell a user whose ``batch_size: auto`` an engine resolved by timing its steps."""
    trainer = config.get("trainer") or {}
    if trainer.get("batch_size") != "auto" or schedule.batch_size <= 0:
        return ""
    size = schedule.batch_size
    return (
        f"batch_size auto: {size} (the engine timed its steps to pick it, so another run can "
        f"pick another); pin it with trainer.batch_size: {size}"
    )


class EventSubscription:
    """A reader's position in a ledger's events.

    ``drain()`` returns what is new, and :attr:`state` is the ledger's state as of the last event
    drained.
    """

    def __init__(self, ledger: RunLedger) -> None:
        self._ledger = ledger
        self._position = 0
        self.closed = False
        self.state = ledger.state

    def drain(self) -> list[ev.Event]:
        """The events since the last drain (empty once closed)."""
        if self.closed:
            return []
        with self._ledger.lock:
            log = self._ledger.events
            new = log.slice(self._position, len(log))
            self._position += len(new)
            self.state = self._ledger.state
        return new

    def skip(self) -> None:
        """Move past every event so far without reading them (:attr:`state` is then the latest).

        For a view that draws no curve: nothing is rebuilt from the log.
        """
        if self.closed:
            return
        with self._ledger.lock:
            self._position = len(self._ledger.events)
            self.state = self._ledger.state

    def close(self) -> None:
        """Stop reading: later drains return nothing."""
        self.closed = True


class RunLedger:
    """The one place a run's events are reduced.

    ``config`` (the rendered config, for early stopping) may be None.
    """

    def __init__(
        self, run_id: str, name: str, engine: str, config: Mapping[str, Any] | None = None
    ) -> None:
        self.lock = threading.RLock()
        self.events = EventLog()  # steps in columns: a million of them is ~60 MB, not 250
        self.state = RunState(run_id=run_id, name=name, engine=engine)
        self.eta = EtaTracker()
        self.early_stop = EarlyStopWatch(config)
        self.hindsight = Hindsight(config)
        self.config = config or {}
        #: the GPU index the run trains on; set from each RunStarted (None on CPU)
        self.device_index: int | None = None
        #: whether it trains on a GPU: False on the CPU, None before its RunStarted says
        self.uses_gpu: bool | None = None

    def append(self, event: ev.Event) -> RunState:
        """Record ``event``; returns the new state.

        The event is folded into the state, the ETA and the early-stop watch, once.
        """
        with self.lock:
            self.events.append(event)
            self.state = reduce_state(self.state, event)
            self.eta.observe(event)
            self.early_stop.observe(event)
            self.hindsight.observe(event)
            if isinstance(event, ev.RunStarted):
                self.device_index = device_index_of(event)
                self.uses_gpu = "cuda" in event.device  # "cuda:1", "2 × cuda (Ray)"
            return self.state

    def completed(self, event: ev.Event) -> ev.Event:
        """``event`` with what the run layer adds before :meth:`append` records it.

        The hindsight's warnings on the run's ``RunFinished``; on a ``RunStarted`` whose batch
        size ``auto`` chose without saying why (an engine that times steps), a note that says
        so. So the log, the state and every view have them.
        """
        if isinstance(event, ev.RunFinished) and not event.warnings:
            with self.lock:
                warnings = self.hindsight.warnings()
            return dataclasses.replace(event, warnings=warnings) if warnings else event
        if isinstance(event, ev.RunStarted) and not event.schedule.batch_note:
            note = auto_batch_note(self.config, event.schedule)
            if note:
                schedule = dataclasses.replace(event.schedule, batch_note=note)
                return dataclasses.replace(event, schedule=schedule)
        return event

    def subscribe(self) -> EventSubscription:
        """A reader that gets every event from the start, then only new ones."""
        return EventSubscription(self)

    def estimate(self, now: float) -> Estimate | None:
        """The ETA tracker's estimate at wall-clock ``now`` (None before any basis)."""
        with self.lock:
            return self.eta.estimate(now)

    def eta_reading(self, now: float) -> EtaReading:
        """The estimate, the early-stop forecast and the first stable finish at ``now``."""
        with self.lock:
            try:
                estimate = self.eta.estimate(now)
            except Exception:  # an estimator bug must not blank the views
                estimate = None
            state = self.state
            first = self.eta.first_estimate
            watch = self.early_stop
            forecast = None
            if watch.active and state.total_steps:
                step_s = getattr(estimate, "step_s", None)
                forecast = watch.forecast(state.step, state.total_steps, step_s)
        return EtaReading(
            estimate=estimate,
            early_stopping=watch.active,
            forecast=forecast,
            first_finish=None if first is None else float(first.finish_time),
        )


def device_index_of(event: ev.RunStarted) -> int | None:
    """The GPU index a run trains on.

    The engine's ``device_index``, else parsed from ``device`` ("cuda:1" -> 1, "cuda" -> 0) for
    engines that only name the device.
    """
    if event.device_index is not None:
        return event.device_index
    if not event.device.startswith("cuda"):
        return None
    _, _, index = event.device.partition(":")
    return int(index) if index.isdigit() else 0
