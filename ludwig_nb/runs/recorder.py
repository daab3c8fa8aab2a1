"""``RunRecorder``: writes a run's events and status into its run directory as it goes.

``events.ndjson`` is append-only and flushed at least every ``flush_interval`` seconds
(and at every event that is not a step, so phase changes, evaluations, pauses and the end
are on disk at once); ``status.json`` is replaced atomically at most every
``status_interval`` seconds and at every non-step event. A kernel that dies loses at most
the last second of events.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ludwig_nb.core import events as ev
from ludwig_nb.core import rundir, strict_json
from ludwig_nb.core.state import RunState

__all__ = ["RunRecorder"]


class RunRecorder:
    def __init__(
        self,
        directory: Path,
        eta: Callable[[float], dict[str, Any] | None] | None = None,
        flush_interval: float = 0.5,
        status_interval: float = 1.0,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._events: IO[str] | None = open(  # noqa: SIM115 - kept open for the run's life
            self.directory / rundir.EVENTS_FILE, "a", encoding="utf-8"
        )
        self._eta = eta
        self._flush_interval = flush_interval
        self._status_interval = status_interval
        self._last_flush = float("-inf")
        self._last_status = float("-inf")
        self._lock = threading.Lock()

    def record(self, event: ev.Event, state: RunState) -> None:
        """Append ``event``; refresh status.json when due. Called on the emitting thread."""
        urgent = not isinstance(event, ev.StepFinished)
        with self._lock:
            if self._events is None:
                return
            self._events.write(event.to_json() + "\n")
            if urgent or event.time - self._last_flush >= self._flush_interval:
                self._events.flush()
                self._last_flush = event.time
            if urgent or event.time - self._last_status >= self._status_interval:
                self._write_status(state, event.time)
                self._last_status = event.time

    def write_status(self, state: RunState, now: float) -> None:
        with self._lock:
            self._write_status(state, now)

    def _write_status(self, state: RunState, now: float) -> None:
        data = state.to_dict()
        data["eta"] = None if state.is_final or self._eta is None else self._eta(now)
        data["pid"] = os.getpid()
        data["written_at"] = now
        data["directory"] = str(self.directory)
        rundir.write_json_atomic(self.directory / rundir.STATUS_FILE, strict_json.flagged(data))

    def close(self) -> None:
        with self._lock:
            if self._events is not None:
                with contextlib.suppress(OSError):
                    self._events.flush()
                    self._events.close()
                self._events = None
