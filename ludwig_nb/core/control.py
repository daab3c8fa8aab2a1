"""``RunControl``: the one way anything outside the engine steers a running training loop.

The Stop button, ``%ludwig_stop``, the sidebar's control file, a temperature alarm and
``%unload_ext`` all call these methods; the engine calls :meth:`RunControl.checkpoint` at
every step boundary. It lives in ``core`` (not ``runs``) because the engines, which sit
below ``runs``, must know its type.

Engines depend on the :class:`Control` protocol, not on this class: a handful of methods with
plain arguments, so that an engine in another process (Ray) can be handed a proxy for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

__all__ = ["Control", "RunControl", "StopRequested"]


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
    def stop_requested(self) -> bool: ...

    @property
    def stop_reason(self) -> str | None: ...

    @property
    def paused(self) -> bool: ...

    def checkpoint(self) -> None: ...

    def wait_while_paused(
        self,
        on_pause: Callable[[str], None] | None = None,
        on_resume: Callable[[str], None] | None = None,
    ) -> None: ...


class RunControl:
    """Thread-safe stop / pause / resume flags (a :class:`Control`).

    Pauses nest by reason: an alarm pause and a user pause are separate, and the run
    continues only when every reason has been released. ``poll``, when given, is called at
    every :meth:`checkpoint` and while paused: the run layer reads the control file there
    (requests from the sidebar), so the engine needs to know nothing about it.
    """

    def __init__(self, poll: Callable[[], None] | None = None) -> None:
        self._poll = poll
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop_reason: str | None = None
        self._pause_reasons: set[str] = set()
        #: how many times a stop was asked for (engine: ray cancels its job at the second)
        self.stop_count = 0

    # -- requests (any thread) -------------------------------------------------------
    def stop(self, reason: str = "user") -> None:
        with self._changed:
            self.stop_count += 1
            if self._stop_reason is None:
                self._stop_reason = reason
            self._changed.notify_all()

    def pause(self, reason: str = "user") -> None:
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

    # -- state -----------------------------------------------------------------------
    @property
    def stop_requested(self) -> bool:
        return self._stop_reason is not None

    @property
    def stop_reason(self) -> str | None:
        return self._stop_reason

    @property
    def paused(self) -> bool:
        return bool(self._pause_reasons)

    @property
    def pause_reasons(self) -> frozenset[str]:
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
        """Block while paused (not while stopping). ``poll`` runs while waiting, so that
        a control file can be read even when nothing else wakes the thread."""
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
        if on_resume is not None:
            on_resume(reason)

    def checkpoint(self) -> None:
        """Poll for outside requests, then raise :class:`StopRequested` if a stop was asked for."""
        if self._poll is not None:
            self._poll()
        if self._stop_reason is not None:
            raise StopRequested(self._stop_reason)
