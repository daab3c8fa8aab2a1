"""``DeadlineWatch``: a run's deadline, checked at least once a second, acted on in time.

It listens to the run's events (the training thread) and, where the run has one, to its
sampler's ticks (so a paused or stalled run still hears about its deadline), and feeds the
run's ETA to :class:`~ludwig_nb.core.deadline.DeadlinePolicy`. What the policy decides:

* ``warn``: a ``DeadlineWarning`` event (the dashboard, sidebar and CLI show it);
* ``checkpoint``: ``control.request_checkpoint`` (the engine saves at its next step and
  trains on), once the run has finished a step (before, there is nothing to save); an engine
  that does not take checkpoint requests is stopped instead (a stop saves one), with the
  warning saying so;
* ``stop``: ``control.stop`` (a graceful stop saves a resumable checkpoint).

The lead the policy keeps comes from the run itself: its step time, and the longest
checkpoint and evaluation seen so far. ``clock`` is a parameter, so tests run on simulated
time.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.deadline import (
    Deadline,
    DeadlineDecision,
    DeadlineOutlook,
    DeadlinePolicy,
    Lead,
    outlook,
)
from ludwig_nb.core.eta.plan import Estimate

__all__ = ["DeadlineTarget", "DeadlineWatch"]

log = logging.getLogger(__name__)


class DeadlineTarget(Protocol):
    """What the watch needs of a run (the ``Run`` handle has it)."""

    @property
    def control(self) -> RunControl:
        """The run's control: asked for a checkpoint or a stop."""

    def eta(self, now: float | None = None) -> Estimate | None:
        """The run's ETA at wall-clock ``now``."""

    def emit(self, event: ev.Event) -> None:
        """Record an event in the run's stream."""


class DeadlineWatch:
    """Checks ``run`` against ``deadline`` on every event and sampler tick (≥ ``tick_s`` apart).

    Args:
        run: The run.
        deadline: Its deadline.
        clock: Wall-clock seconds (the events' clock).
        tz: The zone clock times are shown in (None: local).
        tick_s: The least time between two checks, seconds.
    """

    def __init__(
        self,
        run: DeadlineTarget,
        deadline: Deadline,
        clock: Callable[[], float] = time.time,
        tz: dt.tzinfo | None = None,
        tick_s: float = 1.0,
    ) -> None:
        self.run, self.deadline = run, deadline
        self._clock, self._tz, self._tick_s = clock, tz, tick_s
        self.policy = DeadlinePolicy(deadline, tz)
        self._lock = threading.RLock()
        self._last: float | None = None
        self._checkpoint_s: float | None = None
        self._evaluation_s = 0.0
        self._closed = False
        self._training = False  # a step has finished: there is something to checkpoint
        self.decisions: list[DeadlineDecision] = []

    # -- inputs ------------------------------------------------------------------------
    def on_event(self, event: ev.Event) -> None:
        """The run's listener: learn costs from its events, then check (rate-limited)."""
        if isinstance(event, ev.StepFinished):
            if not self._training:  # the first step: a checkpoint can wait no longer
                self._training, self._last = True, None
        elif isinstance(event, ev.CheckpointSaved):
            seen = max(0.0, event.time - event.start_time)
            self._checkpoint_s = max(self._checkpoint_s or 0.0, seen)
        elif isinstance(event, ev.EvaluationFinished):
            self._evaluation_s = max(self._evaluation_s, 0.0, event.time - event.start_time)
        elif isinstance(event, ev.RunFinished | ev.RunFailed):
            self._closed = True
            return
        if not isinstance(event, ev.DeadlineWarning):  # our own events: no check from inside
            self.check(event.time)

    def on_snapshot(self, snapshot: object) -> None:
        """The sampler's subscriber: check at its tick (paused runs emit no events)."""
        del snapshot
        self.check(self._clock())

    def close(self) -> None:
        """No more checks."""
        self._closed = True

    # -- the check ---------------------------------------------------------------------
    def check(self, now: float) -> list[DeadlineDecision]:
        """Ask the policy at ``now`` (s) unless asked less than ``tick_s`` ago; act on it."""
        with self._lock:
            if self._closed or (self._last is not None and now - self._last < self._tick_s):
                return []
            self._last = now
            estimate = self.run.eta(now)
            lead = Lead(
                step_s=estimate.step_s if estimate is not None else 0.0,
                checkpoint_s=self._checkpoint_s,
                evaluation_s=self._evaluation_s,
                tick_s=self._tick_s,
            )
            decisions = self.policy.update(now, estimate, lead, ready=self._training)
            for decision in decisions:
                self._apply(decision)
            self.decisions.extend(decisions)
            return decisions

    def outlook(self, now: float, estimate: Estimate | None) -> DeadlineOutlook:
        """The ETA against the deadline at ``now`` (for the views' words)."""
        return outlook(self.deadline, estimate, now, self._tz)

    def _apply(self, decision: DeadlineDecision) -> None:
        control = self.run.control
        message = decision.message
        if decision.kind == "checkpoint":
            if control.checkpoint_requests_honoured:
                control.request_checkpoint("deadline")
            else:  # this engine cannot save mid-run: a graceful stop saves instead
                message += ": this engine saves only when it stops, so the run stops"
                control.stop(f"deadline: {message}")
        elif decision.kind == "stop":
            control.stop(f"deadline: {message}")
        self._emit(decision, message)

    def _emit(self, decision: DeadlineDecision, message: str) -> None:
        try:
            self.run.emit(
                ev.DeadlineWarning(
                    time=decision.time,
                    kind=decision.kind,
                    deadline=self.deadline.at,
                    verdict=decision.outlook.verdict,
                    message=message,
                )
            )
        except Exception:  # a warning must never take the run down
            log.exception("ludwig_nb: could not record a deadline warning")
