"""The UI pump: the only code that writes widget state.

Views register with the pump; at most ``fps`` times a second the pump calls
``view.refresh(now)`` on each, and a view pulls whatever arrived since its last frame (from
an event queue or a sampler's latest-value slot) and writes its widgets in one batch
(``hold_sync``). The training thread and the sampler thread never touch a widget.

The pump runs either in its own daemon thread (JupyterLab, classic Notebook: widget
updates from threads render there) or on the main thread while a cell blocks
(:meth:`Pump.run_until`, for Colab, where they do not).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Pump", "View"]

log = logging.getLogger(__name__)


class View(Protocol):
    """What the UI pump refreshes: anything with ``refresh(now)`` and ``closed``."""

    def refresh(self, now: float) -> None:
        """Write whatever changed since the last frame; ``now`` is monotonic seconds."""

    @property
    def closed(self) -> bool:
        """True once the view needs no more frames (its run ended and it froze)."""


class Pump:
    """Calls ``refresh`` on every view at most ``fps`` times a second.

    ``clock`` and ``sleep`` are injectable so that tests drive frames on virtual time.
    """

    def __init__(
        self,
        fps: float = 4.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        if fps <= 0:
            raise ValueError("fps must be positive")
        self.interval = 1.0 / fps
        self._clock = clock
        self._views: list[View] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._sleep = sleep
        self._thread: threading.Thread | None = None
        self.frames = 0

    # -- views -----------------------------------------------------------------------
    def add(self, view: View) -> None:
        """Refresh ``view`` from the next frame on."""
        with self._lock:
            self._views.append(view)
        self._wake.set()

    def remove(self, view: View) -> None:
        """Stop refreshing ``view``; unknown views are ignored."""
        with self._lock, contextlib.suppress(ValueError):
            self._views.remove(view)

    @property
    def views(self) -> list[View]:
        """The views refreshed now."""
        with self._lock:
            return list(self._views)

    # -- one frame -------------------------------------------------------------------
    def frame(self, now: float | None = None) -> None:
        """Refresh every view once; drop views that are closed. Never raises."""
        now = self._clock() if now is None else now
        for view in self.views:
            try:
                view.refresh(now)
            except Exception:  # a broken view must not kill the pump or other views
                log.exception("ludwig_nb: a view failed to refresh; removing it")
                self.remove(view)
                continue
            if view.closed:
                self.remove(view)
        self.frames += 1

    # -- thread mode -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether the pump's thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the pump's daemon thread (no-op when running)."""
        if self.running:
            return
        self._stopped.clear()
        self._thread = threading.Thread(target=self._loop, name="ludwig_nb-ui-pump", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the pump's thread, waiting up to ``timeout`` s for it."""
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopped.wait(seconds)

    def _loop(self) -> None:
        next_frame = self._clock()
        while not self._stopped.is_set():
            if not self.views:  # idle: sleep until a view is added
                self._wake.wait(timeout=1.0)
                self._wake.clear()
                next_frame = self._clock()
                continue
            self.frame()
            next_frame += self.interval
            delay = next_frame - self._clock()
            if delay < 0:  # fell behind (a slow frame): skip, don't burst
                next_frame = self._clock()
                delay = 0.0
            self._wait(delay)

    # -- main-thread mode (Colab) ----------------------------------------------------
    def run_until(self, done: Callable[[], bool], on_interrupt: Callable[[], None]) -> None:
        """Pump on the calling thread until ``done()``.

        Ctrl-C / kernel interrupt calls ``on_interrupt`` (a graceful stop) and keeps pumping until
        ``done()``.
        """
        while True:
            try:
                while not done():
                    start = self._clock()
                    self.frame(start)
                    self._wait(max(0.0, self.interval - (self._clock() - start)))
                self.frame()
                return
            except KeyboardInterrupt:
                on_interrupt()
