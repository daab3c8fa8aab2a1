"""Training throughput (samples, and an LLM's tokens, per second) over the most recent steps.

Counts only time spent inside steps (``StepFinished.start_time`` to ``time``), so pauses,
evaluations and checkpoints do not drag the rate down. The data wait is the share of that time
the steps spent waiting for their batches (``StepFinished.data_wait``), the number that says the
device is starved. The unit is the run's (``RunStarted.sample_unit``: "images" for image inputs).
Pure: times come from the events.
"""

from __future__ import annotations

from collections import deque

from ludwig_nb.core import events as ev

__all__ = ["ThroughputMeter"]


class ThroughputMeter:
    """Samples/s over the steps that ended in the last ``window_s`` seconds (event time)."""

    def __init__(self, window_s: float = 10.0) -> None:
        self.window_s = window_s
        #: (end, duration s, samples, tokens, padded tokens, data wait s or None)
        self._steps: deque[tuple[float, float, int, int, int, float | None]] = deque()
        self._busy = 0.0
        self._samples = 0
        self._tokens = 0
        self._padded = 0
        self.counts_tokens = False  # an LLM run's steps carry their tokens
        self._waited = 0.0  # seconds of data wait over the steps that report it
        self._timed = 0.0  # seconds of those steps
        #: what a sample is ("samples", "images"), from the run's RunStarted
        self.unit = "samples"

    def observe(self, event: ev.Event) -> None:
        """Record a finished step's duration, batch size and data wait; others are ignored."""
        if isinstance(event, ev.RunStarted):
            self.unit = event.sample_unit or "samples"
        if not isinstance(event, ev.StepFinished):
            return
        duration = max(0.0, event.time - event.start_time)
        wait = None if event.data_wait is None else min(duration, max(0.0, event.data_wait))
        tokens, padded = event.tokens or 0, event.padded_tokens or 0
        self.counts_tokens = self.counts_tokens or event.tokens is not None
        step = (event.time, duration, event.batch_size, tokens, padded, wait)
        self._steps.append(step)
        self._add(step, 1)
        while self._steps and self._steps[0][0] < event.time - self.window_s:
            self._add(self._steps.popleft(), -1)

    def _add(self, step: tuple[float, float, int, int, int, float | None], sign: int) -> None:
        _, duration, samples, tokens, padded, wait = step
        self._busy += sign * duration
        self._samples += sign * samples
        self._tokens += sign * tokens
        self._padded += sign * padded
        if wait is not None:
            self._waited += sign * wait
            self._timed += sign * duration

    @property
    def data_wait_share(self) -> float | None:
        """Share (0-1) of the recent steps' time spent waiting for data; None when unreported."""
        if self._timed <= 1e-9 or not any(step[5] is not None for step in self._steps):
            return None
        return min(1.0, max(0.0, self._waited / self._timed))

    @property
    def samples_per_s(self) -> float | None:
        """None before the first step with a measurable duration."""
        if not self._steps or self._busy <= 1e-9:
            return None
        return self._samples / self._busy

    @property
    def steps_per_s(self) -> float | None:
        """Steps per second of busy time over the recent steps; None without any."""
        if not self._steps or self._busy <= 1e-9:
            return None
        return len(self._steps) / self._busy

    @property
    def tokens_per_s(self) -> tuple[float, float] | None:
        """(non-padding, padded) tokens per second of busy time; None without token counts."""
        if not self.counts_tokens or not self._steps or self._busy <= 1e-9:
            return None
        return self._tokens / self._busy, self._padded / self._busy
