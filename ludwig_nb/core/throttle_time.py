"""Time a GPU lost to throttling, per cause, from the driver's counters or its sampled flags.

NVML keeps a cumulative counter of the time the clocks were held down for each cause (the
``NVML_FI_DEV_CLOCKS_EVENT_REASON_*`` field values, or the older violation status; both in
ns since the driver loaded, seconds in :class:`~ludwig_nb.core.gpu_sample.GpuSample`). The
difference of a counter between two samples is exactly the time lost in between, however
short the episodes were; without a counter, the reasons the sample shows are taken to hold
for the whole interval before it (the sampled estimate).

Causes: ``thermal`` (SW and HW thermal slowdown; the hardware one engages above the software
one, so its time lies within it and the cause counts the larger of the two), ``power_cap``,
``power_brake`` and ``sync_boost``. Causes can overlap (a hot card is often power capped
too), so the total of an interval is the sum of its causes capped at the interval's length.

Pure: samples are :class:`GpuSample` objects or their ``to_dict()`` form; times are
seconds on one clock, passed in.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ludwig_nb.core.gpu_sample import THERMAL_REASONS

__all__ = [
    "CAUSES",
    "CAUSE_WORDS",
    "COUNTERS",
    "FLAGS",
    "ThrottleMeter",
    "ThrottleTime",
    "describe_throttle_time",
    "throttle_time",
    "worst_gpu",
]

CAUSES = ("thermal", "power_cap", "power_brake", "sync_boost")
CAUSE_WORDS = {
    "thermal": "thermal",
    "power_cap": "power cap",
    "power_brake": "power brake",
    "sync_boost": "sync boost",
}
#: the counter fields (seconds) of each cause
COUNTERS: dict[str, tuple[str, ...]] = {
    "thermal": ("throttled_thermal_s", "throttled_hw_thermal_s"),
    "power_cap": ("throttled_power_s",),
    "power_brake": ("throttled_power_brake_s",),
    "sync_boost": ("throttled_sync_boost_s",),
}
#: the clock event reasons of each cause
FLAGS: dict[str, tuple[str, ...]] = {
    "thermal": THERMAL_REASONS,
    "power_cap": ("sw_power_cap",),
    "power_brake": ("hw_power_brake_slowdown",),
    "sync_boost": ("sync_boost",),
}


@dataclasses.dataclass(frozen=True)
class ThrottleTime:
    """Throttled seconds over ``span_s`` seconds of samples.

    ``causes``: seconds per cause (every cause of :data:`CAUSES`); ``source``: ``"counters"``,
    ``"flags"`` (no counter at all) or ``"counters+flags"`` (a cause that had a counter went
    without it for some intervals).
    """

    span_s: float
    total_s: float
    causes: Mapping[str, float]
    source: str

    @property
    def share(self) -> float | None:
        """The throttled fraction of the span (0..1), None for an empty span."""
        return self.total_s / self.span_s if self.span_s > 0 else None

    def cause_share(self, cause: str) -> float | None:
        """One cause's fraction of the span (0..1), None for an empty span."""
        return self.causes.get(cause, 0.0) / self.span_s if self.span_s > 0 else None

    def to_dict(self) -> dict[str, object]:
        """JSON-able form (``share`` included for readers that only show it)."""
        return {
            "span_s": self.span_s,
            "total_s": self.total_s,
            "share": self.share,
            "causes": dict(self.causes),
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThrottleTime:
        """Rebuild from :meth:`to_dict`; raises ``KeyError``/``TypeError`` on a bad mapping."""
        causes = {str(k): float(v) for k, v in dict(data.get("causes") or {}).items()}
        return cls(
            float(data["span_s"]), float(data["total_s"]), causes, str(data.get("source", ""))
        )


def _get(sample: Any, key: str) -> Any:
    if isinstance(sample, Mapping):
        return sample.get(key)
    return getattr(sample, key, None)


class ThrottleMeter:
    """Adds up one GPU's throttled time sample by sample; keeps a recent window too.

    Args:
        window_s: How many seconds :meth:`recent_share` looks back.
    """

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self._previous: tuple[float, Any] | None = None
        self._span = 0.0
        self._total = 0.0
        self._causes = dict.fromkeys(CAUSES, 0.0)
        self._sources: dict[str, set[str]] = {c: set() for c in CAUSES}
        #: (time, seconds, seconds throttled, seconds per cause) of each recent interval
        self._recent: collections.deque[tuple[float, float, float, dict[str, float]]] = (
            collections.deque()
        )

    def add(self, sample: Any, time: float) -> float:
        """Take the sample read at ``time`` (s); returns the seconds throttled since the last."""
        previous, self._previous = self._previous, (time, sample)
        if previous is None or time <= previous[0]:
            return 0.0
        dt = time - previous[0]
        lost = {c: self._cause(c, previous[1], sample, dt) for c in CAUSES}
        total = min(dt, sum(lost.values()))
        self._span += dt
        self._total += total
        for cause, seconds in lost.items():
            self._causes[cause] += seconds
        self._recent.append((time, dt, total, lost))
        while self._recent and self._recent[0][0] <= time - self.window_s:
            self._recent.popleft()
        return total

    def _cause(self, cause: str, before: Any, after: Any, dt: float) -> float:
        deltas = []
        for key in COUNTERS[cause]:
            a, b = _get(before, key), _get(after, key)
            if a is not None and b is not None and b >= a:  # a drop: the driver reloaded
                deltas.append(min(dt, float(b) - float(a)))
        if deltas:
            self._sources[cause].add("counters")
            return max(deltas)
        reasons = _get(after, "clock_reasons")
        if reasons is None:
            return 0.0
        self._sources[cause].add("flags")
        return dt if set(reasons) & set(FLAGS[cause]) else 0.0

    def result(self) -> ThrottleTime | None:
        """Everything added so far; None before two samples."""
        if self._span <= 0:
            return None
        counted = [used for used in self._sources.values() if "counters" in used]
        if not counted:
            source = "flags"
        elif any("flags" in used for used in counted):
            source = "counters+flags"
        else:
            source = "counters"
        return ThrottleTime(self._span, self._total, dict(self._causes), source)

    def recent_share(self) -> float | None:
        """The throttled fraction of the last ``window_s`` seconds; None without data."""
        recent = self.recent()
        return None if recent is None else recent.share

    def recent(self) -> ThrottleTime | None:
        """The figures of the last ``window_s`` seconds; None without data."""
        span = sum(entry[1] for entry in self._recent)
        if span <= 0:
            return None
        causes = dict.fromkeys(CAUSES, 0.0)
        for *_, lost in self._recent:
            for cause, seconds in lost.items():
                causes[cause] += seconds
        total = sum(entry[2] for entry in self._recent)
        whole = self.result()
        return ThrottleTime(span, total, causes, whole.source if whole else "flags")


def throttle_time(samples: Iterable[tuple[float, Any]]) -> ThrottleTime | None:
    """One GPU's :class:`ThrottleTime` over ``(time, sample)`` pairs in time order."""
    meter = ThrottleMeter()
    for time, sample in samples:
        meter.add(sample, time)
    return meter.result()


def worst_gpu(per_gpu: Mapping[str, ThrottleTime | None]) -> tuple[str, ThrottleTime] | None:
    """The most throttled GPU's key and figures (the slowest GPU paces a parallel run)."""
    known = [(k, t) for k, t in per_gpu.items() if t is not None and t.span_s > 0]
    if not known:
        return None
    return max(known, key=lambda kt: (kt[1].share or 0.0, kt[1].total_s))


def _percent(share: float) -> str:
    value = 100.0 * share
    if 0 < value < 0.5:
        return "<1 %"
    return f"{value:.0f} %"


def describe_throttle_time(
    figures: ThrottleTime | None, of: str = "the run", gpu: str | None = None
) -> str:
    """``"throttled 7 % of the run (thermal 5 %, power cap 2 %)"``; "" without figures.

    ``gpu``: named when a run had several (``"GPU 1 throttled ..."``). A run that never
    throttled reads ``"not throttled"``.
    """
    if figures is None or figures.share is None:
        return ""
    who = f"{gpu} " if gpu else ""
    if figures.total_s <= 0:
        return f"{who}not throttled"
    parts: Sequence[str] = [
        f"{CAUSE_WORDS[c]} {_percent(figures.cause_share(c) or 0.0)}"
        for c in CAUSES
        if figures.causes.get(c, 0.0) > 0
    ]
    detail = f" ({', '.join(parts)})" if parts else ""
    return f"{who}throttled {_percent(figures.share)} of {of}{detail}"
