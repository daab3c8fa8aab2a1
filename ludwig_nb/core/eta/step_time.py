"""The step time of the current regime (``StepRate``) and its record of past misses.

Segments start at a change alarm's change point or a known change; MSER-5 cuts each
one's warm-up (stable once a cut holds on 40 steps; before, the median of the last 20);
the level is ``median x (1 + tail)`` of the stable part, the straggler share pooled with
earlier regimes', each step capped at 20 medians; load that comes and goes blends in the
long-run mean (:meth:`StepRate.step_s`). ETA_METHODS.md section 3. O(1) amortised.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.changes import ChangeDetector
from ludwig_nb.core.eta.plan import EtaState
from ludwig_nb.core.eta.stats import batch_means_variance, median, trimmed_mean, warmup_cut

__all__ = ["SelfCheck", "StepRate"]


class SelfCheck:
    """The step times predicted at every 10 % of growth (the last 16), and their misses.

    Batch means describe a run that stays as it is; the misses widen the interval of a
    run whose level wanders or changed.
    """

    def __init__(self) -> None:
        self._predictions: list[tuple[int, float]] = []  # (steps seen, seconds predicted)
        self._next = const.BACKTEST_MIN_STEPS

    def due(self, steps: int) -> bool:
        """Is a prediction due after ``steps`` regular steps?"""
        return steps >= self._next

    def record(self, steps: int, predicted_s: float | None) -> None:
        """Record the step time predicted after ``steps`` steps (``None``: not stable yet)."""
        if predicted_s is not None and predicted_s > 0:
            self._predictions.append((steps, predicted_s))
            del self._predictions[: -const.BACKTEST_KEEP]
        self._next = steps + max(const.BACKTEST_MIN_STEPS // 2, int(steps * const.REVISIT_GROWTH))

    def level_error(self, prefix: Sequence[float], basis: Sequence[int], var: float) -> float:
        """The mean of ``max(0, e² - noise)`` over predictions at least 20 steps old.

        ``e``: log of the mean step time since (``prefix``: sums of the step times) over
        the prediction; ``noise``: that of a stationary run with ``var`` seconds² per
        step, on the steps since and on those it rested on, from the latest of
        ``basis`` (the segment's cut, then its start) before it. 0 under 3 judged.
        """
        end = len(prefix) - 1
        misses = []
        for at, predicted in self._predictions:
            since = end - at
            realized = (prefix[end] - prefix[at]) / since if since > 0 else 0.0
            if since < const.BACKTEST_MIN_STEPS or realized <= 0:
                continue
            rested_on = max(1, at - next((b for b in basis if b < at), basis[-1]))
            noise = var * (1.0 / since + 1.0 / rested_on) / (realized * realized)
            misses.append(max(0.0, math.log(realized / predicted) ** 2 - noise))
        return sum(misses) / len(misses) if len(misses) >= 3 else 0.0


class StepRate:
    """Seconds per regular step in the current regime, from the durations seen.

    Args:
        prior_s: the step time to answer before any step (a pilot's), or ``None``.
    """

    def __init__(self, prior_s: float | None = None) -> None:
        self._prior_s = prior_s
        self._x: array[float] = array("d")  # regular step durations (capped), seconds
        self._cum: array[float] = array("d", [0.0])  # prefix sums of _x
        self._detector = ChangeDetector()
        self._check = SelfCheck()
        self._was_stable = False  # some segment has had an accepted cut on enough steps
        self._segments = 0
        self._tail_sum = 0.0  # over closed stable segments: sum of n * (mean/median - 1)
        self._tail_n = 0
        self._last_step_s: float | None = None
        # Since the last known change: the first settled cut, the alarms since, the
        # direction of the last large swing (+1, -1, 0) and whether one reversed another.
        self._origin: int | None = None
        self._alarms, self._swing, self._comes_back = 0, 0, False
        # Per segment (set by _start_segment):
        self._seg = 0
        self._adjust_until = 0  # "adjusting" until this many steps
        self._cut: int | None = None  # first stable step of the segment
        self._settled_cut: int | None = None  # the last cut accepted on enough steps
        self._mser_next = 0
        self._provisional_s: float | None = None
        self._start_segment(0)

    @property
    def count(self) -> int:
        """Regular steps seen."""
        return len(self._x)

    @property
    def stable_span(self) -> tuple[int, int] | None:
        """``(first stable step, steps seen)`` of the current segment; ``None`` before a cut."""
        end = len(self._x)
        if self._cut is None or end <= self._cut:
            return None
        return self._cut, end

    @property
    def state(self) -> EtaState:
        """``"warming_up"``, ``"adjusting"`` or ``"stable"`` (see :data:`EtaState`)."""
        if not self._was_stable:
            return "warming_up"
        if self._cut is None or len(self._x) < self._adjust_until:
            return "adjusting"
        return "stable"

    def new_regime(self, scale: float | None = None) -> None:
        """A known change starts a regime at the next step.

        Args:
            scale: until the new regime has steps, the step time is the current one times
                this (``None``: unknown, the last steps speak).
        """
        current = self.step_s()
        self._start_segment(len(self._x))
        self._origin, self._alarms, self._swing, self._comes_back = None, 0, 0, False
        if current is not None and scale is not None:
            self._provisional_s = current * scale

    def add(self, duration: float) -> None:
        """One regular step took ``duration`` seconds."""
        level = self._detector.level_s
        if level is not None:
            duration = min(duration, const.STRAGGLER_CAP * level)
        self._x.append(duration)
        self._cum.append(self._cum[-1] + duration)
        self._last_step_s = duration
        at = self._detector.observe(duration)
        if at is not None:
            self._note_swing(at)
            self._start_segment(at)
        end = len(self._x)
        if end >= self._mser_next:
            self._run_mser()
        self._detector.refit(self._x, self._cut)
        if self._check.due(end):
            self._check.record(end, self.step_s() if self._was_stable else None)

    def step_s(self, steps_left: int = 0) -> float | None:
        """Seconds per regular step over the next ``steps_left`` steps, or ``None``.

        The regime's level. Once the level has come back (load that comes and goes),
        regimes are expected to keep changing at the rate seen (``lam`` alarms per
        step): the level holds for a share ``w = (1 - exp(-lam K)) / (lam K)`` of the
        ``K`` steps left, the mean since the first settled cut for the rest.
        """
        level = self._level_s()
        end = len(self._x)
        if level is None or not self._comes_back or self._origin is None or steps_left <= 0:
            return level
        lam_k = self._alarms / (end - self._origin) * steps_left
        w = -math.expm1(-lam_k) / lam_k
        history = (self._cum[end] - self._cum[self._origin]) / (end - self._origin)
        return w * level + (1.0 - w) * history

    def _level_s(self) -> float | None:
        """``bulk x (1 + tail)`` of the stable part, else provisional, else the prior."""
        end = len(self._x)
        if self._cut is not None and end > self._cut:
            lo = max(self._cut, end - const.BULK_WINDOW)
            bulk = median(self._x[lo:end])
            mean = (self._cum[end] - self._cum[lo]) / (end - lo)
            if bulk <= 0:
                return mean
            return bulk * (1.0 + self._pooled_tail(mean / bulk - 1.0, end - lo))
        seg_len = end - self._seg
        if self._provisional_s is not None and seg_len < const.MIN_BASIS:
            return self._provisional_s
        if seg_len >= const.MIN_BASIS or (seg_len > 0 and self._segments > 1):
            bulk = median(self._x[max(self._seg, end - const.PROVISIONAL_WINDOW) : end])
            return bulk * (1.0 + self._pooled_tail(0.0, 0))
        if self._segments > 1 and self._last_step_s is not None:
            return self._last_step_s
        return self._prior_s

    def variance(self, step_s: float) -> tuple[float, float, int]:
        """``(seconds² per step, steps behind the mean, degrees of freedom)``.

        Batch means on the stable part, else the sample variance of the last 20 steps,
        else ``(step_s / 2)²`` on one step (``step_s``: the step time in use, seconds).
        """
        end = len(self._x)
        if self._cut is not None:
            var, df = batch_means_variance(self._cum, self._cut, end)
            if df > 0:
                return var, float(end - self._cut), df
        window = self._x[max(self._seg, end - const.PROVISIONAL_WINDOW) : end]
        if len(window) >= 2:
            mu = sum(window) / len(window)
            var = sum((v - mu) ** 2 for v in window) / (len(window) - 1)
            return var, float(len(window)), len(window) - 1
        return (0.5 * step_s) ** 2, 1.0, 1

    def level_error(self, var: float) -> float:
        """:meth:`SelfCheck.level_error` on this run (``var``: seconds² per step)."""
        basis = (self._seg,) if self._cut is None else (self._cut, self._seg)
        return self._check.level_error(self._cum, basis, var)

    def _start_segment(self, index: int) -> None:
        # Steps from ``index`` on belong to the new regime: a shifted level would pass
        # for stragglers in the old one's tail share.
        self._close_segment(index)
        self._seg = index
        self._segments += 1
        # Counted from when the change is known (an alarm comes after its change point).
        self._adjust_until = len(self._x) + const.ADJUST_STEPS if self._was_stable else 0
        self._cut = None
        self._settled_cut = None
        self._mser_next = index + const.MSER_FIRST
        self._provisional_s = None
        self._detector.restart(index)

    def _note_swing(self, at: int) -> None:
        """Before an alarm at ``at`` starts a segment: count it, and note a large swing."""
        before = self._level_s()
        if self._origin is None or before is None or before <= 0:
            return
        self._alarms += 1
        after = trimmed_mean(self._x[at:])
        if after > 0 and abs(math.log(after / before)) >= const.SWING_LOG:
            direction = 1 if after > before else -1
            self._comes_back = self._comes_back or direction == -self._swing
            self._swing = direction

    def _run_mser(self) -> None:
        start, end = self._seg, len(self._x)
        n = end - start
        cut, accepted = warmup_cut(self._cum, start, end)
        settled = n >= const.STABLE_MIN_STEPS
        if accepted:  # a cut on fewer steps is used for the number, and revisited soon
            self._cut = cut
            self._was_stable = self._was_stable or settled
            if settled:
                self._settled_cut = cut
                self._origin = cut if self._origin is None else self._origin
        else:
            self._cut = self._settled_cut if settled else None
        self._mser_next = end + max(const.MSER_BATCH, int(n * const.REVISIT_GROWTH))

    def _pooled_tail(self, own: float, n: int) -> float:
        """The segment's own tail share (``n`` steps) shrunk towards the history's."""
        if not self._tail_n:
            return own
        weight = min(self._tail_n, const.TAIL_PRIOR_STEPS)
        history = self._tail_sum / self._tail_n
        return (history * weight + own * n) / (weight + n)

    def _close_segment(self, end: int) -> None:
        """Pool the ending segment's tail share (stable part, up to ``end``)."""
        if self._cut is None or end - self._cut < const.STABLE_MIN_STEPS:
            return
        lo = max(self._cut, end - const.BULK_WINDOW)
        bulk = median(self._x[lo:end])
        if bulk > 0:
            n = end - lo
            self._tail_sum += ((self._cum[end] - self._cum[lo]) / n / bulk - 1.0) * n
            self._tail_n += n
