"""The ETA line of the dashboard: estimator fed with events, text refreshed at most 1/s.

Uses ``ludwig_nb.core.eta`` (``EtaTracker`` and its display formatter) when it is
installed; until then, and before the estimator has a basis, the text says
"estimating…". The first finish time the estimator predicts is kept, so the summary can
compare the time taken with it.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.ui.formatting import format_clock, format_duration

__all__ = ["EtaText", "format_estimate"]

ESTIMATING = "estimating…"
WARMING_UP = "warming up…"


def format_estimate(estimate: Any, now: float) -> str:
    """``"≈ 12 min 30 s (11 min 50 s – 13 min 20 s) · done ≈ 14:05"``.

    ``estimate`` has ``remaining_s``, ``low_s``, ``high_s`` (seconds from ``now``) and
    ``state`` ("warming_up", "stable", "adjusting"); ``now`` is wall-clock seconds.
    """
    if estimate is None:
        return ESTIMATING
    remaining = getattr(estimate, "remaining_s", None)
    state = str(getattr(estimate, "state", "stable"))
    if remaining is None or not math.isfinite(remaining):
        return WARMING_UP if state == "warming_up" else ESTIMATING
    text = f"≈ {format_duration(remaining)}"
    low, high = getattr(estimate, "low_s", None), getattr(estimate, "high_s", None)
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        low_text, high_text = format_duration(low), format_duration(high)
        if low_text != high_text:
            text += f" ({low_text} – {high_text})"
    text += f" · done ≈ {format_clock(now + max(0.0, remaining))}"
    if state == "warming_up":
        return f"{WARMING_UP} {text}"
    if state == "adjusting":
        return f"adjusting… {text}"
    return text


_TRACKER_MODULES = ("ludwig_nb.core.eta_events", "ludwig_nb.core.eta")
_FORMAT_MODULES = ("ludwig_nb.core.eta_format", "ludwig_nb.core.eta_display", "ludwig_nb.core.eta")
_FORMAT_NAMES = ("format_eta", "format_estimate")


def _find(modules: tuple[str, ...], names: tuple[str, ...]) -> Any:
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            found = getattr(module, name, None)
            if callable(found):
                return found
    return None


def _load_eta() -> tuple[Callable[[], Any] | None, Callable[[Any, float], str]]:
    """The ``EtaTracker`` class and the display formatter from ``core`` when present."""
    tracker = _find(_TRACKER_MODULES, ("EtaTracker",))
    formatter = _find(_FORMAT_MODULES, _FORMAT_NAMES) or format_estimate
    return tracker, formatter


class EtaText:
    """Feeds events to an ETA tracker and gives the line to show.

    ``min_interval`` (seconds, monotonic) bounds how often the text changes.

    Args:
        min_interval: Seconds (monotonic) between changes of the text.
        config: The run's config, for early stopping (its patience and validation metric).
    """

    def __init__(self, min_interval: float = 1.0, config: Any = None) -> None:
        from ludwig_nb.core.early_stop import EarlyStopWatch

        #: early stopping: the total is an upper bound, and the likely stop is forecast
        self.watch = EarlyStopWatch(config)
        self._steps_done = 0
        self._total_steps = 0
        self._paused = False
        factory, self._format = _load_eta()
        self._tracker = factory() if factory is not None else None
        self.min_interval = min_interval
        self.text = ESTIMATING
        self._last_refresh: float | None = None
        self.first_finish: float | None = None  # wall time of the first stable prediction
        self.started_at: float | None = None

    @property
    def available(self) -> bool:
        """Whether an ETA tracker is there."""
        return self._tracker is not None

    def observe(self, event: ev.Event) -> None:
        """Feed one event to the ETA tracker and the early-stopping watch."""
        if isinstance(event, ev.RunStarted) and self.started_at is None:
            self.started_at = event.time
        if isinstance(event, ev.RunStarted | ev.ScheduleChanged):
            self._total_steps = event.schedule.total_steps
        elif isinstance(event, ev.StepFinished):
            self._steps_done = event.step + 1
        elif isinstance(event, ev.Paused | ev.Resumed):
            self._paused = isinstance(event, ev.Paused)
        self.watch.observe(event)
        if self._tracker is not None:
            self._tracker.observe(event)

    def estimate(self, now: float) -> Any:
        """The tracker's estimate at wall time ``now``, or None."""
        if self._tracker is None:
            return None
        try:
            return self._tracker.estimate(now)
        except Exception:  # an estimator bug must not blank the dashboard
            return None

    def refresh(self, wall_now: float, mono_now: float, force: bool = False) -> bool:
        """Recompute the text if ``min_interval`` passed (or ``force``); True if it changed."""
        if (
            not force
            and self._last_refresh is not None
            and mono_now - self._last_refresh < self.min_interval
        ):
            return False
        self._last_refresh = mono_now
        if self._paused and not force and self.text not in (ESTIMATING, WARMING_UP):
            return False  # paused: the estimate stays frozen where the pause found it
        estimate = self.estimate(wall_now)
        self._remember_first(estimate, wall_now)
        if self._tracker is None:
            text = ESTIMATING  # no estimator installed
        elif estimate is None and self._format is format_estimate:
            text = WARMING_UP
        else:
            text = self._format(estimate, wall_now)  # core's formatter words None itself
        text = self._with_forecast(text, estimate)
        changed = text != self.text
        self.text = text
        return changed

    def _with_forecast(self, text: str, estimate: Any) -> str:
        """Add the early-stopping bound and forecast to ``text`` when early stopping is on.

        E.g. ``"≤ <ETA> · at most 11,000 steps (early stopping); likely stops near step 2,900,
        ≈ 45 s from now"``.
        """
        if not self.watch.active or not self._total_steps:
            return text
        from ludwig_nb.core.early_stop import format_forecast

        step_s = getattr(estimate, "step_s", None)
        forecast = self.watch.forecast(self._steps_done, self._total_steps, step_s)
        words = format_forecast(forecast, self._total_steps)
        if forecast is not None and forecast.remaining_s is not None:
            words += f", ≈ {format_duration(forecast.remaining_s)} from now"
        bound = text
        if text not in (ESTIMATING, WARMING_UP):  # "≈ 4 min" reads "≤ 4 min", never "≤ ≈"
            bound = f"≤ {text.removeprefix('≈ ')}"
        return f"{bound} · {words}"

    def _remember_first(self, estimate: Any, wall_now: float) -> None:
        if self.first_finish is not None:
            return
        first = getattr(self._tracker, "first_estimate", None)
        if first is not None and getattr(first, "finish_time", None) is not None:
            self.first_finish = float(first.finish_time)  # the tracker saw it at its step
            return
        if estimate is None:
            return
        remaining = getattr(estimate, "remaining_s", None)
        if getattr(estimate, "state", "") != "warming_up" and remaining is not None:
            self.first_finish = wall_now + float(remaining)
