"""Training throughput (samples, and an LLM's tokens, per second) over the most recent steps.

Counts only time spent inside steps (``StepFinished.start_time`` to ``time``), so pauses,
evaluations and checkpoints do not drag the rate down. Pure: times come from the events.
"""

from __future__ import annotations

from collections import deque

from ludwig_nb.core import events as ev

__all__ = ["ThroughputMeter"]


class ThroughputMeter:
    """Samples/s over the steps that ended in the last ``window_s`` seconds (event time)."""

    def __init__(self, window_s: float = 10.0) -> None:
        self.window_s = window_s
        # (end, duration s, samples, tokens, padded tokens)
        self._steps: deque[tuple[float, float, int, int, int]] = deque()
        self._busy = 0.0
        self._samples = 0
        self._tokens = 0
        self._padded = 0
        self.counts_tokens = False  # an LLM run's steps carry their tokens

    def observe(self, event: ev.Event) -> None:
        """Record a finished step's duration and batch size; other events are ignored."""
        if not isinstance(event, ev.StepFinished):
            return
        duration = max(0.0, event.time - event.start_time)
        tokens, padded = event.tokens or 0, event.padded_tokens or 0
        self.counts_tokens = self.counts_tokens or event.tokens is not None
        self._steps.append((event.time, duration, event.batch_size, tokens, padded))
        self._busy += duration
        self._samples += event.batch_size
        self._tokens += tokens
        self._padded += padded
        while self._steps and self._steps[0][0] < event.time - self.window_s:
            _, old_duration, old_samples, old_tokens, old_padded = self._steps.popleft()
            self._busy -= old_duration
            self._samples -= old_samples
            self._tokens -= old_tokens
            self._padded -= old_padded

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
