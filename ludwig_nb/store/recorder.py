"""``RunRecorder``: writes a run's events and status into its run directory as it goes.

``events.ndjson`` is append-only. Lines are buffered in memory and written whole: on
every event that is not a step (phase changes, evaluations, pauses, the end), and at least
every ``flush_interval`` seconds by a timer, even when no event arrives. ``status.json`` is
replaced atomically at every non-step event and, while steps run, by the timer every
``status_interval`` seconds (a step only formats its line and keeps the state: no file
write, no ETA on the training thread). A kernel that dies loses at most the last second of
events.

A write that fails (a full disk) loses nothing and leaves no half line: the file is cut
back to its last whole line and the lines stay buffered until a later flush succeeds.
``status.json`` that cannot be replaced (no space for the temporary file) is rewritten in
place, so a failed run never stays "training" on disk.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core import strict_json
from ludwig_nb.core.state import RunState
from ludwig_nb.store import rundir

__all__ = ["RunRecorder", "Ticker", "thread_ticker"]

log = logging.getLogger(__name__)

#: ``ticker(callback, interval_s) -> stop``: calls ``callback`` every ``interval_s``
#: seconds until ``stop()`` is called (a parameter so that tests drive time by hand)
Ticker = Callable[[Callable[[], None], float], Callable[[], None]]


def thread_ticker(callback: Callable[[], None], interval: float) -> Callable[[], None]:
    """A daemon thread that calls ``callback`` every ``interval`` seconds."""
    stopped = threading.Event()

    def loop() -> None:
        while not stopped.wait(interval):
            try:
                callback()
            except Exception:  # never let the flusher die silently
                log.exception("ludwig_nb: the recorder's timed flush failed")

    threading.Thread(target=loop, name="ludwig_nb-recorder-flush", daemon=True).start()
    return stopped.set


class RunRecorder:
    """Events and status of one run on disk. Thread-safe; ``close()`` flushes.

    Args:
        directory: The run directory (created if missing).
        eta: Returns the ETA to write in ``status.json`` at a wall-clock time; None: no ETA.
        flush_interval: Seconds between writes of the buffered events.
        status_interval: Seconds between writes of ``status.json``.
        clock: Wall-clock seconds; default ``time.time``.
        ticker: Starts the periodic flush at the first event (a background thread by default);
            None: writes happen only on events and ``close()``.
        words: Returns more fields merged into ``status.json`` for a state at a wall-clock
            time (the run's pause and early-stop wording, ``core/status_words.py``); None: none.
    """

    def __init__(
        self,
        directory: Path,
        eta: Callable[[float], dict[str, Any] | None] | None = None,
        flush_interval: float = 0.5,
        status_interval: float = 1.0,
        *,
        clock: Callable[[], float] | None = None,
        ticker: Ticker | None = thread_ticker,
        words: Callable[[RunState, float], dict[str, Any]] | None = None,
    ) -> None:
        import time

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / rundir.EVENTS_FILE
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._good_size = os.fstat(self._fd).st_size  # bytes on disk that end a whole line
        #: events not yet written; their JSON is made at the write (steps: by the timer, off
        #: the training thread, ~5 us a step on a 300 us CPU step)
        self._pending: list[ev.Event] = []
        self._eta = eta
        self._words = words  # worded fields (pause, early stop) merged into status.json
        self._flush_interval = flush_interval
        self._status_interval = status_interval
        self._clock = clock or time.time
        self._last_status = float("-inf")
        self._state: RunState | None = None  # the latest state not yet in status.json
        self._lock = threading.Lock()
        #: the last write error (None once writes succeed again)
        self.write_error: OSError | None = None
        self._status_failed = False
        self._closing_until: float | None = None  # closed, still retrying a failed write
        self._ticker = ticker
        self._stop_ticker: Callable[[], None] | None = None  # started by the first event
        self._logged: set[str] = set()  # what failed and was logged (once until it works)

    def record(self, event: ev.Event, state: RunState) -> None:
        """Append ``event``; refresh status.json when due. Called on the emitting thread."""
        urgent = not isinstance(event, ev.StepFinished)
        with self._lock:
            if self._fd is None:
                return
            if self._ticker is not None and self._stop_ticker is None:
                self._stop_ticker = self._ticker(self.tick, self._flush_interval)
            self._pending.append(event)
            self._state = state
            if urgent:
                self._flush_events()
                self._write_status(event.time)
            elif (self._stop_ticker is None or self._last_status == float("-inf")) and (
                event.time - self._last_status >= self._status_interval
            ):
                # no timer (or no status.json yet): a step that is due writes it here; with
                # the timer, steps never do: status.json and its ETA stay off the training
                # thread (the timer writes the latest state when it is due)
                self._write_status(event.time)

    def tick(self) -> None:
        """The timer: write buffered events, and the status when it is due."""
        with self._lock:
            if self._fd is None:
                return
            self._flush_events()
            now = self._clock()
            if self._state is not None and now - self._last_status >= self._status_interval:
                self._write_status(now)
            if self._closing_until is not None:
                self._finish_closing(now)

    def _flush_events(self) -> None:
        if not self._pending or self._fd is None:
            return
        data = "".join([f"{event.to_json()}\n" for event in self._pending]).encode("utf-8")
        try:
            _write_all(self._fd, data)
        except OSError as err:
            self._note_error(err, "the event log")
            with contextlib.suppress(OSError):  # cut a half-written line back off
                os.ftruncate(self._fd, self._good_size)
            return
        self._good_size += len(data)
        self._pending.clear()
        self.write_error = None
        self._logged.discard("the event log")

    def _write_status(self, now: float) -> None:
        state = self._state
        if state is None:
            return
        data = state.to_dict()
        data["eta"] = None if state.is_final or self._eta is None else self._eta(now)
        if self._words is not None:
            try:
                data.update(self._words(state, now))
            except Exception:  # a wording bug must never keep the status off disk
                log.exception("ludwig_nb: the worded status fields of %s failed", self.directory)
        data["pid"] = os.getpid()
        data["written_at"] = now
        data["directory"] = str(self.directory)
        data = strict_json.flagged(data)
        if self.write_error is not None:
            data["write_error"] = str(self.write_error)
        path = self.directory / rundir.STATUS_FILE
        try:
            rundir.write_json_atomic(path, data)
        except OSError as err:
            self._note_error(err, "status.json")
            try:  # no room for a temporary file: overwrite the old one in its own blocks
                _rewrite_in_place(path, strict_json.dumps({**data, "write_error": str(err)}))
            except OSError:
                self._status_failed = True
                return
        self._status_failed = False
        self._logged.discard("status.json")
        self._last_status = now
        self._state = None if state.is_final else state

    def _note_error(self, err: OSError, what: str) -> None:
        if what not in self._logged:  # once per failing file, not once per retry
            self._logged.add(what)
            log.error("ludwig_nb: cannot write %s of %s: %s", what, self.directory, err)
        self.write_error = err

    def close(self, retry_s: float = 600.0) -> None:
        """Flush what is buffered and release the file.

        When a write still fails (a full disk), the timer keeps retrying for up to ``retry_s``
        seconds, so that freeing space completes the log and the final status; then what is left is
        dropped.
        """
        with self._lock:
            if self._fd is None:
                return
            self._flush_events()
            if self._state is not None:
                self._write_status(self._clock())
            self._closing_until = self._clock() + retry_s
            if self._stop_ticker is None:
                self._closing_until = float("-inf")  # no timer to retry on
            self._finish_closing(self._clock())

    def _finish_closing(self, now: float) -> None:
        assert self._closing_until is not None
        done = not self._pending and not self._status_failed
        if not done and now < self._closing_until:
            return
        if not done:
            log.error(
                "ludwig_nb: gave up writing %d events of %s", len(self._pending), self.directory
            )
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._pending.clear()
        stop, self._stop_ticker = self._stop_ticker, None
        if stop is not None:
            stop()

    @property
    def pending_events(self) -> int:
        """Event lines recorded but not yet on disk (a full disk keeps them here)."""
        with self._lock:
            return len(self._pending)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _rewrite_in_place(path: Path, text: str) -> None:
    """Overwrite ``path`` in place, without a temporary file.

    A reader may see a torn file for an instant; better than a status that says "training" forever.
    """
    with open(path, "r+b") as handle:
        handle.write(text.encode("utf-8"))
        handle.truncate()
