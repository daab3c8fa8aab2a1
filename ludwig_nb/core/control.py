"""``RunControl``: the one way anything outside the engine steers a running training loop.

The Stop button, ``%ludwig_stop``, the sidebar's control file, a temperature alarm and
``%unload_ext`` all call these methods; the engine calls :meth:`RunControl.checkpoint` at
every step boundary, and :meth:`RunControl.pace` there too (the throttle's idle time).
It lives in ``core`` (not ``runs``) because the engines, which sit
below ``runs``, must know its type.

Engines depend on the :class:`Control` protocol, not on this class: a handful of methods with
plain arguments, so that an engine in another process (Ray) can be handed a proxy for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["CheckpointRequests", "Control", "RunControl", "StopRequested"]


class StopRequested(Exception):
    """Raised inside the engine by :meth:`RunControl.checkpoint` when a stop was asked for."""


class Control(Protocol):
    """What an engine may ask of the run that steers it (the engine side only).

    Every call takes and returns plain values, so an implementation can forward them across
    a process boundary. ``checkpoint`` raises :class:`StopRequested` when a stop was asked for;
    ``wait_while_paused`` blocks while paused and calls ``on_pause(reason)`` /
    ``on_resume(reason)`` around the wait.
    """

    @property
    def stop_requested(self) -> bool:
        """Whether a stop was asked for."""

    @property
    def stop_reason(self) -> str | None:
        """Why the stop was asked for (e.g. ``"user"``, ``"interrupt"``); None without a stop."""

    @property
    def paused(self) -> bool:
        """Whether the run is paused."""

    def checkpoint(self) -> None:
        """Raise :class:`StopRequested` when a stop was asked for; call at every step boundary."""

    def wait_while_paused(
        self,
        on_pause: Callable[[str], None] | None = None,
        on_resume: Callable[[str], None] | None = None,
    ) -> None:
        """Block while paused; calls ``on_pause(reason)`` before, ``on_resume(reason)`` after."""

    def pace(self, max_idle: float = 10.0) -> float:
        """Idle for the throttle's duty cycle (<= ``max_idle`` s); returns the seconds idled."""


@runtime_checkable
class CheckpointRequests(Protocol):
    """A control that can ask the engine for a checkpoint now (a deadline's action).

    An engine that can save one mid-run calls :meth:`take_checkpoint_request` at its step
    boundaries; the first call marks the control as honouring requests, so whoever asks knows
    whether anyone listens (an engine that never calls it cannot save on request).
    """

    def take_checkpoint_request(self) -> str | None:
        """The reason of a pending request (and clear it), or None."""


class RunControl:
    """Thread-safe stop / pause / resume flags and the throttle's pace (a :class:`Control`).

    Pauses nest by reason: an alarm pause and a user pause are separate, and the run
    continues only when every reason has been released. ``poll``, when given, is called at
    every :meth:`checkpoint` and while paused: the run layer reads the control file there
    (requests from the sidebar), so the engine needs to know nothing about it.
    """

    def __init__(
        self,
        poll: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """Create the control; ``clock`` and ``sleep`` are injectable for tests.

        ``clock`` (seconds) and ``sleep`` (seconds; default: a wait that a stop or a pause cuts
        short) time the pacing, so tests can run it on virtual time.
        """
        self._poll = poll
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop_reason: str | None = None
        self._pause_reasons: set[str] = set()
        self._clock, self._sleep = clock, sleep
        self._duty, self._pace_reason = 1.0, ""
        self._pace_mark: float | None = None  # when the engine last left pace()
        self._idle_seconds = 0.0
        #: how many times a stop was asked for (engine: ray cancels its job at the second)
        self.stop_count = 0
        self._checkpoint_request: str | None = None
        #: True once the engine looked for checkpoint requests (it can save on request)
        self.checkpoint_requests_honoured = False

    # -- requests (any thread) -------------------------------------------------------
    def stop(self, reason: str = "user") -> None:
        """Ask the run to stop at its next step boundary; the first ``reason`` is kept."""
        with self._changed:
            self.stop_count += 1
            if self._stop_reason is None:
                self._stop_reason = reason
            self._changed.notify_all()

    def pause(self, reason: str = "user") -> None:
        """Pause the run for ``reason`` until that reason is resumed (pauses nest by reason)."""
        with self._changed:
            self._pause_reasons.add(reason)
            self._changed.notify_all()

    def resume(self, reason: str | None = None) -> None:
        """Release one pause reason, or all of them when ``reason`` is None."""
        with self._changed:
            if reason is None:
                self._pause_reasons.clear()
            else:
                self._pause_reasons.discard(reason)
            self._changed.notify_all()

    def request_checkpoint(self, reason: str) -> None:
        """Ask the engine to save a checkpoint at its next step boundary (and train on)."""
        with self._changed:
            self._checkpoint_request = reason

    def take_checkpoint_request(self) -> str | None:
        """Engine side: the reason of a pending checkpoint request, cleared; None without one."""
        with self._changed:
            self.checkpoint_requests_honoured = True
            reason, self._checkpoint_request = self._checkpoint_request, None
            return reason

    # -- state -----------------------------------------------------------------------
    @property
    def stop_requested(self) -> bool:
        """Whether a stop was asked for."""
        return self._stop_reason is not None

    @property
    def stop_reason(self) -> str | None:
        """The reason of the first stop request; None without one."""
        return self._stop_reason

    @property
    def paused(self) -> bool:
        """Whether any pause reason is held."""
        return bool(self._pause_reasons)

    @property
    def pause_reasons(self) -> frozenset[str]:
        """The pause reasons held now."""
        with self._lock:
            return frozenset(self._pause_reasons)

    # -- engine side -----------------------------------------------------------------
    def wait_while_paused(
        self,
        on_pause: Callable[[str], None] | None = None,
        on_resume: Callable[[str], None] | None = None,
        poll: Callable[[], None] | None = None,
        poll_interval: float = 0.25,
    ) -> None:
        """Block while paused (not while stopping).

        ``poll`` runs while waiting, so that a control file can be read even when nothing else wakes
        the thread.
        """
        poll = poll or self._poll
        with self._changed:
            if not self._pause_reasons or self._stop_reason is not None:
                return
            reason = ",".join(sorted(self._pause_reasons))
        if on_pause is not None:
            on_pause(reason)
        with self._changed:
            while self._pause_reasons and self._stop_reason is None:
                self._changed.wait(timeout=poll_interval)
                if poll is not None:
                    self._changed.release()
                    try:
                        poll()
                    finally:
                        self._changed.acquire()
        self._pace_mark = self._clock()  # a pause is not work: pacing restarts here
        if on_resume is not None:
            on_resume(reason)

    # -- pacing (the throttle) ---------------------------------------------------------
    def set_pace(self, duty: float, reason: str = "") -> None:
        """Train ``duty`` of the time (0 < duty <= 1; 1.0 is full speed).

        The engine idles ``busy * (1 - duty) / duty`` seconds after each ``busy`` seconds of work.
        Raises ``ValueError`` for a duty outside (0, 1].
        """
        if not 0.0 < duty <= 1.0:
            raise ValueError(f"duty must be in (0, 1], got {duty!r}")
        with self._changed:
            self._duty, self._pace_reason = float(duty), reason if duty < 1.0 else ""

    @property
    def duty(self) -> float:
        """The duty cycle asked for (1.0: not throttled)."""
        return self._duty

    @property
    def pace_reason(self) -> str:
        """Why the run is paced (the throttle's words); ``""`` at full speed."""
        return self._pace_reason

    @property
    def idle_seconds(self) -> float:
        """Idle time the engine has inserted so far (seconds)."""
        return self._idle_seconds

    def pace(self, max_idle: float = 10.0) -> float:
        """Engine side, at each step boundary.

        Idle for the duty cycle's share of the time worked since the last call (at most ``max_idle``
        seconds; a stop or pause cuts it short). Returns the seconds idled. Never changes a step.
        """
        now = self._clock()
        mark, duty = self._pace_mark, self._duty
        idle = 0.0
        if mark is not None and duty < 1.0 and not self.paused and not self.stop_requested:
            idle = min(max_idle, max(0.0, now - mark) * (1.0 - duty) / duty)
        if idle > 0.0:
            self._idle(idle)
            self._idle_seconds += idle
        self._pace_mark = self._clock()
        return idle

    def _idle(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        with self._changed:
            self._changed.wait_for(
                lambda: self._stop_reason is not None or bool(self._pause_reasons),
                timeout=seconds,
            )

    def checkpoint(self) -> None:
        """Poll for outside requests, then raise :class:`StopRequested` if a stop was asked for."""
        if self._poll is not None:
            self._poll()
        if self._stop_reason is not None:
            raise StopRequested(self._stop_reason)
