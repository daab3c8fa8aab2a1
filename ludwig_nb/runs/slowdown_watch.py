"""``SlowdownWatch``: the time a run's GPUs lose to throttling, live, and when it matters.

It subscribes to the run's sampler and keeps a :class:`~ludwig_nb.core.throttle_time.ThrottleMeter`
per GPU the run uses (the driver's counters where it has them, else the sampled flags). When
a GPU's clocks were held down for at least :data:`ON_SHARE` of the last minute it emits a
``GpuSlowdown`` event (``active``), and again (``active=False``) once that falls to
:data:`OFF_SHARE`: the ETA starts a new regime there (the step time changes), and the views
say it. ``figures()`` gives the run's figures so far for the status and the end-of-run
summary. Everything runs on the sampler thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.core.throttle_time import (
    CAUSES,
    ThrottleMeter,
    ThrottleTime,
    describe_throttle_time,
)

__all__ = ["MIN_SPAN", "OFF_SHARE", "ON_SHARE", "SlowdownTarget", "SlowdownWatch"]

log = logging.getLogger(__name__)

ON_SHARE = 0.25  # of the last minute throttled: the GPU is slowed down
OFF_SHARE = 0.05  # ... and back under this: it is not any more
MIN_SPAN = 20.0  # seconds of the window seen before anything is said
_WINDOW = 60.0


class SlowdownTarget(Protocol):
    """What the watch needs of a run."""

    @property
    def device_index(self) -> int | None:
        """The GPU it trains on; None: every GPU the sampler sees."""

    def emit(self, event: ev.Event) -> None:
        """Record an event in the run's stream."""


class _Sampler(Protocol):
    def subscribe(self, callback: Callable[[Snapshot], object]) -> Callable[[], None]: ...


class _Gpu:
    """One GPU's meter, state and clock reference."""

    def __init__(self) -> None:
        self.meter = ThrottleMeter(window_s=_WINDOW)
        self.active = False
        self.clock_before: float | None = None  # SM MHz when it last changed state
        self.clock_now: float | None = None


class SlowdownWatch:
    """Throttled time per GPU of ``run`` from ``sampler``'s snapshots.

    Args:
        sampler: Its snapshots are read.
        run: The run the events go to.
    """

    def __init__(self, sampler: _Sampler | None, run: SlowdownTarget) -> None:
        self.run = run
        self._gpus: dict[int, _Gpu] = {}
        self._lock = threading.Lock()
        self._unsubscribe = None if sampler is None else sampler.subscribe(self.on_snapshot)

    def close(self) -> None:
        """Stop listening (idempotent)."""
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def on_snapshot(self, snapshot: Snapshot) -> None:
        """Add one snapshot's GPUs (the sampler calls this)."""
        wanted = self.run.device_index
        for sample in snapshot.gpus:
            if sample.mig_index is not None or sample.lost:
                continue
            if wanted is not None and sample.index != wanted:
                continue
            with self._lock:
                gpu = self._gpus.setdefault(sample.index, _Gpu())
                gpu.meter.add(sample, snapshot.time)
                event = self._transition(sample, gpu, snapshot.time)
            if event is not None:
                self._emit(event)

    def _transition(self, sample: GpuSample, gpu: _Gpu, now: float) -> ev.GpuSlowdown | None:
        recent = gpu.meter.recent()
        if sample.clock_sm:
            gpu.clock_now = sample.clock_sm
            if gpu.clock_before is None:
                gpu.clock_before = sample.clock_sm
        if recent is None or recent.span_s < MIN_SPAN or recent.share is None:
            return None
        flip = recent.share <= OFF_SHARE if gpu.active else recent.share >= ON_SHARE
        if not flip:
            if not gpu.active and sample.clock_sm and not sample.clock_reasons:
                gpu.clock_before = sample.clock_sm  # the unthrottled clock to compare with
            return None
        gpu.active = not gpu.active
        ratio = None
        if gpu.clock_before and gpu.clock_now:
            ratio = gpu.clock_now / gpu.clock_before
        gpu.clock_before = gpu.clock_now
        label = f"GPU {sample.index}"
        text = describe_throttle_time(recent, of="the last minute", gpu=label)
        if not gpu.active:
            text = f"{label} back to full clocks"
        causes = tuple(c for c in CAUSES if recent.causes.get(c, 0.0) > 0)
        return ev.GpuSlowdown(
            time=now,
            device=sample.index,
            active=gpu.active,
            share=recent.share,
            causes=causes,
            clock_ratio=ratio,
            text=text,
        )

    def _emit(self, event: ev.Event) -> None:
        try:
            self.run.emit(event)
        except Exception:  # one broken run must not stop the sampler's subscribers
            log.exception("ludwig_nb: could not record a GPU slowdown")

    def figures(self) -> dict[int, ThrottleTime]:
        """Each GPU's throttled time over the run so far."""
        with self._lock:
            found = {i: g.meter.result() for i, g in self._gpus.items()}
        return {i: t for i, t in found.items() if t is not None}
