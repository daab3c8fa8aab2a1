"""The step-time model behind the ETA: regimes, warm-up, stragglers (``StepRate``).

Fed with the duration of every regular training step (seconds), it answers the step time
of the current regime, its long-run variance, and whether the run is warming up, stable
or adjusting to a change. Pure and standard library only; see ``ludwig_nb.core.eta`` for
how the ETA uses it, and ``shared/design/notes/ETA_METHODS.md`` section 3 for the methods:

* **Segments**: the run is cut into regimes. A two-sided CUSUM (k = 0.5, h = 8, clip 3)
  on medians of 8-step blocks of log step time, standardised by the long-run spread of
  the blocks (an AR(1) correction, since step times wander), raises alarms; an alarm
  starts a new segment at the estimated change point only if the shift in trimmed means
  is at least 10 % (smaller shifts barely move an ETA). An alarm is undone when the new
  level comes back within 3 % of the old one (a wander, not a regime).
* **Warm-up**: MSER-5 on each segment (winsorised batch means, cut accepted only in the
  first half), revisited at every 10 % of growth; after a change, a stable part whose
  halves still differ by more than 5 % (a throttling ramp) is cut at its middle.
* **Step time**: ``bulk x (1 + tail)``: the median of the stable part, and the straggler
  share ``mean / median - 1`` shrunk towards the one pooled over earlier regimes, so a
  fresh regime gets its level from few steps. Each step counts at most 20 medians, so a
  one-off stall (a recompile) is not extrapolated. Before a stable part exists, the
  median of the last 20 steps gives a provisional number.
* **Bursty load**: when an alarm's new level, once settled, differs from the level
  before it by at least 35 %, the direction of that swing is remembered. A run that has
  swung both up and down (external load that comes and goes) is "bursty": from then on
  the step time is the plain mean of every regular step since the first stable cut
  (stragglers capped), and its variance the batch-means variance of that history. A
  known change (``new_regime``, e.g. a batch-size change) forgets the history and the
  swings. A one-way change (throttling that stays) never makes a run bursty.

* **Backtest**: once stable, the step time predicted is recorded at every 10 % of
  growth (the last 64 kept); ``level_error`` compares each with the mean step time since
  and keeps the squared log miss beyond the noise a stationary run would show. The ETA
  adds it to the interval's variance.

O(1) amortised per step: MSER and the references are recomputed at geometrically growing
lengths on bounded windows (at most ~2000 batch means, 4096 steps).
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from typing import Literal

from ludwig_nb.core.eta_stats import (
    MAD_TO_SD,
    Cusum,
    batch_means_variance,
    lag1_correlation,
    mad,
    median,
    mser_truncation,
    trimmed_mean,
)

__all__ = ["EtaState", "StepRate"]

EtaState = Literal["warming_up", "stable", "adjusting"]

_STRAGGLER_CAP = 20.0  # a step counts at most this many medians in the mean
_ADJUST_STEPS = 20  # "adjusting" lasts at least this many steps into a new segment
_BLOCK = 8  # steps per CUSUM observation (their median)
_MIN_REF_BLOCKS = 8
_TRUSTED_REF_BLOCKS = 16
_MERGE_MIN_BLOCKS = 8
_MERGE_LOG = math.log(1.03)
_RAMP_LOG = math.log(1.05)
_MIN_SHIFT_LOG = math.log(1.10)  # smaller alarms are ignored: they barely move the ETA
_CUSUM_FIRST_FIT = _MIN_REF_BLOCKS * _BLOCK  # steps in a segment before detection starts
_REF_WINDOW = 4096  # steps used to fit the CUSUM reference
_MSER_MAX_BATCHES = 2000
_PROVISIONAL_WINDOW = 20
_BULK_WINDOW = 1024  # steps behind the bulk median
# Weight (steps) of the pooled tail share against a new segment's own. Stragglers are
# mostly independent of the regime, and a few hundred heavy-tailed steps say little about
# their share: 400 (was 100) cut the error after a change in the benchmark's heavy-tailed
# "realistic" scenario by ~0.4 points (calibration seeds 1000-1099).
_TAIL_PRIOR_STEPS = 400
_POOLED_TAIL_MAX = 0.5
_STABLE_MIN_STEPS = 40  # MSER must accept a cut on this many steps to leave warm-up
_MIN_BASIS = 3  # steps before a first provisional number (without a prior)
_SIGMA_FLOOR = 0.02  # log-seconds
_MAX_RHO = 0.8
_CUSUM_K = 0.5  # CUSUM slack, in (long-run) standard deviations of a block median
_CUSUM_H = 8.0  # alarm threshold; h = 6 or 7 changed nothing beyond seed noise
_CUSUM_CLIP = 3.0
_BACKTEST_MIN_STEPS = 20  # a prediction is judged on at least this many later steps
_BACKTEST_KEEP = 64  # predictions kept (the most recent)
_SWING_LOG = math.log(1.35)  # a level shift this large, both ways, marks bursty load


@dataclasses.dataclass(frozen=True)
class _Segment:
    """What an alarm replaced, kept until the new segment proves different."""

    seg: int
    cut: int | None
    settled: int | None
    after_change: bool
    mu: float
    tail_sum: float
    tail_n: int


class StepRate:
    """Seconds per regular step in the current regime, from the durations seen.

    ``prior_s``: the step time to answer before any step (a pilot's), or ``None``.
    """

    def __init__(self, prior_s: float | None = None) -> None:
        self._prior_s = prior_s
        self._was_stable = False  # some segment has had an accepted MSER cut
        self._after_change = False  # the current segment follows a stable one
        self._seg = 0
        self._cut: int | None = None
        self._tail_sum = 0.0  # sum over closed stable segments of n * (mean/median - 1)
        self._tail_n = 0
        self._sigma_hist: float | None = None  # last CUSUM spread fitted on many blocks
        self._x: array[float] = array("d")  # regular step durations (capped), seconds
        self._cum: array[float] = array("d", [0.0])  # prefix sums of _x
        self._segments = 0
        self._last_step_s: float | None = None
        self._provisional_s: float | None = None
        self._cusum = Cusum(k=_CUSUM_K, h=_CUSUM_H, clip=_CUSUM_CLIP)
        # Bursty load: alarms whose new level differs from the old one by a swing
        # (>= 35 %) are remembered by direction; once the run has swung both ways, its
        # level comes and goes, and the long-run mean since ``_origin`` predicts best.
        self._origin: int | None = None  # start of the stable history (first settled cut)
        self._swings: set[int] = set()
        self._pending_swing: float | None = None  # log level before the last alarm
        # Backtest: (steps seen, step time predicted then), at ~10 % intervals once stable.
        self._predictions: list[tuple[int, float]] = []
        self._predict_next = _BACKTEST_MIN_STEPS
        self._start_segment(0)

    @property
    def count(self) -> int:
        """Regular steps seen."""
        return len(self._x)

    def new_regime(self, scale: float | None = None) -> None:
        """A known change (a batch-size change) starts a regime at the next step; until
        it has steps, the step time is the current one times ``scale``."""
        current = self.step_s()
        self._start_segment(len(self._x))
        # A known change: the history before it says nothing about the new level.
        self._origin = None
        self._swings.clear()
        # The backtest keeps its predictions: that they miss across a change is what
        # it should learn (this run changes), whatever the cause.
        if current is not None and scale is not None:
            self._provisional_s = current * scale

    @property
    def state(self) -> EtaState:
        """``"warming_up"`` before the first stable segment, ``"adjusting"`` shortly after
        a regime change, else ``"stable"``."""
        if not self._was_stable:
            return "warming_up"
        if self._cut is None or len(self._x) - self._cut < self._min_stable():
            return "adjusting"
        if self._after_change and len(self._x) - self._seg < _ADJUST_STEPS:
            return "adjusting"
        return "stable"

    def _start_segment(self, index: int) -> None:
        # Steps from ``index`` on belong to the new regime: a shifted level would pass
        # for stragglers in the old one's tail share.
        self._close_segment(index)
        self._seg = index
        self._segments += 1
        self._after_change = self._was_stable
        self._cut = None
        self._mser_settled_cut: int | None = None
        self._mser_next = index + 20
        self._mu: float | None = None  # log seconds: the segment's block-median reference
        self._sigma = _SIGMA_FLOOR
        self._refit_next = index + _CUSUM_FIRST_FIT
        self._reset_cusum(len(self._x))
        self._provisional_s = None
        self._undo: _Segment | None = None
        self._pending_swing = None

    def _matters(self, at: int) -> bool:
        """Is the shift since step ``at`` big enough to change the ETA? Compares trimmed
        means (robust to stragglers, steady when step times are bimodal under load)."""
        end = len(self._x)
        lo = self._cut if self._cut is not None else self._seg
        lo = max(lo, at - _BULK_WINDOW)
        if at - lo < _BLOCK or end - at < _BLOCK:
            return True
        before = trimmed_mean(self._x[lo:at])
        after = trimmed_mean(self._x[max(at, end - _BULK_WINDOW) : end])
        if before <= 0 or after <= 0:
            return True
        return abs(math.log(after / before)) >= _MIN_SHIFT_LOG

    def _snapshot(self) -> _Segment | None:
        if self._mu is None:
            return None
        return _Segment(
            self._seg,
            self._cut,
            self._mser_settled_cut,
            self._after_change,
            self._mu,
            self._tail_sum,
            self._tail_n,
        )

    def _maybe_merge(self, blocks: int) -> None:
        """Undo the last alarm if the new level is within 3 % of the old one: step times
        wander, and a wander that came back should not cost the run its history."""
        undo = self._undo
        if undo is None or self._mu is None or blocks < _MERGE_MIN_BLOCKS:
            return
        if abs(self._mu - undo.mu) < _MERGE_LOG:
            self._seg, self._cut, self._mser_settled_cut = undo.seg, undo.cut, undo.settled
            self._after_change = undo.after_change
            self._tail_sum, self._tail_n = undo.tail_sum, undo.tail_n
            self._undo = None
            self._pending_swing = None
        elif blocks >= _TRUSTED_REF_BLOCKS:
            self._undo = None

    def _reset_cusum(self, origin: int) -> None:
        self._block_origin = origin
        self._block: list[float] = []
        self._cusum.reset(0)

    def add(self, duration: float) -> None:
        """One regular step took ``duration`` seconds."""
        if self._mu is not None:
            duration = min(duration, _STRAGGLER_CAP * math.exp(self._mu))
        self._x.append(duration)
        self._cum.append(self._cum[-1] + duration)
        self._last_step_s = duration
        if self._mu is not None:
            self._block.append(math.log(max(duration, 1e-9)))
            if len(self._block) == _BLOCK:
                # CUSUM on block medians: robust to stragglers, and less fooled by the
                # short-range correlation of step times than a per-step test.
                z = (median(self._block) - self._mu) / self._sigma
                self._block = []
                change = self._cusum.update(z)
                if change is not None:
                    at = max(self._seg, self._block_origin + change * _BLOCK)
                    # A shift too small to matter yet leaves the sums high: the next block
                    # asks again, so a ramp is caught as soon as it has grown enough.
                    if self._matters(at):
                        undo = self._snapshot()
                        before = self._level_before(at)
                        self._start_segment(at)
                        self._undo = undo
                        self._pending_swing = before
        end = len(self._x)
        if end >= self._mser_next:
            self._run_mser()
        if end >= self._refit_next:
            self._fit_reference()
        if end >= self._predict_next:
            self._record_prediction(end)

    def _record_prediction(self, end: int) -> None:
        if self._was_stable:
            predicted = self.step_s()
            if predicted is not None and predicted > 0:
                self._predictions.append((end, predicted))
                del self._predictions[:-_BACKTEST_KEEP]
        self._predict_next = end + max(_BACKTEST_MIN_STEPS // 2, end // 10)

    def _run_mser(self) -> None:
        start, end = self._seg, len(self._x)
        n = end - start
        b = 5 * max(1, math.ceil(n / (5 * _MSER_MAX_BATCHES)))
        m = n // b
        means = [(self._cum[start + (i + 1) * b] - self._cum[start + i * b]) / b for i in range(m)]
        d, accepted = mser_truncation(means, min_kept=2)
        settled = n >= _STABLE_MIN_STEPS
        if accepted:
            self._cut = self._past_ramp(start + d * b, end)
            # Declare the run stable only on enough evidence; a cut from fewer steps
            # is still used for the number, and revisited soon.
            self._was_stable = self._was_stable or settled
        elif not settled or self._mser_settled_cut is None:
            self._cut = None
        else:
            self._cut = self._past_ramp(self._mser_settled_cut, end)
        if accepted and settled:
            self._mser_settled_cut = self._cut
            if self._origin is None:
                self._origin = self._cut
            self._note_swing(self._cut, end)
        # Revisit at 10 % longer segments: O(1) amortised, and a cut taken inside a ramp
        # moves to its end soon.
        self._mser_next = end + max(5, n // 10)

    def _level_before(self, at: int) -> float | None:
        """Log trimmed mean of the current segment's stable steps before ``at``."""
        lo = self._cut if self._cut is not None else self._seg
        lo = max(lo, at - _BULK_WINDOW)
        if at - lo < _STABLE_MIN_STEPS:
            return None
        level = trimmed_mean(self._x[lo:at])
        return math.log(level) if level > 0 else None

    def _note_swing(self, cut: int | None, end: int) -> None:
        """Once the segment after an alarm is settled, record a swing if its level is far
        from the level before the alarm."""
        before = self._pending_swing
        if before is None or cut is None or end - cut < _STABLE_MIN_STEPS:
            return
        self._pending_swing = None
        level = trimmed_mean(self._x[max(cut, end - _BULK_WINDOW) : end])
        if level <= 0:
            return
        shift = math.log(level) - before
        if abs(shift) >= _SWING_LOG:
            self._swings.add(1 if shift > 0 else -1)

    @property
    def bursty(self) -> bool:
        """Has the level swung both up and down by a large factor (bursty load)?"""
        return len(self._swings) == 2 and self._origin is not None

    def _past_ramp(self, cut: int, end: int) -> int:
        """MSER weighs bias against variance for a *mean*; we extrapolate the *end*
        level, so after a change a stable part whose halves still differ by more than 5 %
        (a throttling ramp) is cut at its middle. Not in the first regime: there, under
        bursty load, it would chase every burst."""
        half = (end - cut) // 2
        if not self._after_change or half < _STABLE_MIN_STEPS // 2:
            return cut
        first = trimmed_mean(self._x[cut : cut + half])
        second = trimmed_mean(self._x[cut + half : end])
        if first > 0 and second > 0 and abs(math.log(second / first)) > _RAMP_LOG:
            return cut + half
        return cut

    def _fit_reference(self) -> None:
        """Median and spread of block medians of log step time on the stable part."""
        start, end = self._seg, len(self._x)
        lo = self._cut if self._cut is not None else start + (end - start) // 2
        lo = max(start, min(lo, end - _MIN_REF_BLOCKS * _BLOCK), end - _REF_WINDOW)
        logs = [math.log(max(v, 1e-9)) for v in self._x[lo:end]]
        blocks = [median(logs[i : i + _BLOCK]) for i in range(0, len(logs) - _BLOCK + 1, _BLOCK)]
        self._mu = median(blocks)
        spread = MAD_TO_SD * mad(blocks, self._mu)
        # Step times wander (load, clocks): neighbouring blocks are correlated, which a
        # CUSUM would read as a shift. Standardise by the long-run spread of an AR(1).
        rho = min(_MAX_RHO, max(0.0, lag1_correlation(blocks)))
        sigma = max(_SIGMA_FLOOR, spread * math.sqrt((1 + rho) / (1 - rho)))
        if len(blocks) >= _TRUSTED_REF_BLOCKS:
            self._sigma_hist = sigma
        elif self._sigma_hist is not None:
            # A few blocks understate the spread; the noise level rarely changes with
            # the regime, so keep most of the last well-founded one.
            sigma = max(sigma, 0.75 * self._sigma_hist)
        else:
            # No history: the per-step spread scaled to a block median (efficiency
            # 1.25), doubled for the correlation a short window cannot measure.
            per_step = MAD_TO_SD * mad(logs)
            sigma = max(sigma, 2.0 * 1.2533 * per_step / math.sqrt(_BLOCK))
        self._sigma = sigma
        self._reset_cusum(end)
        self._maybe_merge(len(blocks))
        self._refit_next = self._seg + 2 * (end - self._seg)

    def step_s(self) -> float | None:
        """Seconds per regular step in the current regime, or None without a basis.

        ``bulk x (1 + tail)``: the bulk is the median of the segment's stable part (or of
        its last steps while provisional), the tail share ``mean/median - 1`` is pooled
        over every stable step seen, so a fresh regime gets its level from few steps and
        its stragglers from the long history.
        """
        end = len(self._x)
        if self.bursty and self._origin is not None and end > self._origin:
            # Load that comes and goes: the level now says little about the rest of the
            # run; the mean over the whole stable history (stragglers capped) does.
            return (self._cum[end] - self._cum[self._origin]) / (end - self._origin)
        if self._cut is not None and end - self._cut >= self._min_stable():
            lo = max(self._cut, end - _BULK_WINDOW)
            bulk = median(self._x[lo:end])
            if bulk <= 0:
                return (self._cum[end] - self._cum[lo]) / (end - lo)
            own = (self._cum[end] - self._cum[lo]) / (end - lo) / bulk - 1.0
            n = end - lo
            return bulk * (1.0 + self._pooled_tail(own, n))
        seg_len = end - self._seg
        if self._provisional_s is not None and seg_len < _MIN_BASIS:
            return self._provisional_s
        if seg_len >= _MIN_BASIS or (seg_len > 0 and self._segments > 1):
            bulk = median(self._x[max(self._seg, end - _PROVISIONAL_WINDOW) : end])
            return bulk * (1.0 + self._pooled_tail(0.0, 0))
        if self._segments > 1 and self._last_step_s is not None:
            return self._last_step_s
        return self._prior_s

    def _min_stable(self) -> int:
        """Steps a stable part needs before its mean is used: after a change the cut
        often lands inside a ramp (throttling), so the recent steps speak until then."""
        return _STABLE_MIN_STEPS if self._after_change else 1

    def _pooled_tail(self, own: float, n: int) -> float:
        """Tail share: the segment's own (``n`` steps) shrunk towards the history's,
        which counts as at most ``_TAIL_PRIOR_STEPS`` steps, so that the own wins in a
        long regime."""
        if not self._tail_n:
            return own
        weight = min(self._tail_n, _TAIL_PRIOR_STEPS)
        history = self._tail_sum / self._tail_n
        return (history * weight + own * n) / (weight + n)

    def _close_segment(self, end: int) -> None:
        """Pool the ending segment's tail share (stable part only, up to ``end``, where
        the next segment begins) into the history."""
        if self._cut is None or end - self._cut < _STABLE_MIN_STEPS:
            return
        lo = max(self._cut, end - _BULK_WINDOW)
        bulk = median(self._x[lo:end])
        if bulk > 0:
            n = end - lo
            share = (self._cum[end] - self._cum[lo]) / n / bulk - 1.0
            if share <= _POOLED_TAIL_MAX:
                self._tail_sum += share * n
                self._tail_n += n

    def level_error(self, var: float) -> float:
        """How far this run's own past step-time predictions missed, beyond noise: the
        mean over them of ``max(0, e² - noise)``, where ``e`` is the log ratio of the mean
        step time since a prediction to the prediction, and ``noise`` what a stationary
        run with long-run variance ``var`` (seconds² per step) would give (the error of
        the mean the prediction rested on plus the noise of the mean since). A relative
        variance; 0 with fewer than 3 predictions at least 20 steps old.

        A stationary run scores about 0; a run whose level wanders (load, clocks) or
        changed scores the square of its typical miss, which widens the interval: the
        run calibrates its own interval against what it has done so far.
        """
        end = len(self._x)
        misses = []
        for at, predicted in self._predictions:
            since = end - at
            if since < _BACKTEST_MIN_STEPS:
                continue
            realized = (self._cum[end] - self._cum[at]) / since
            if realized <= 0:
                continue
            base = self._cut if self._cut is not None and self._cut < at else self._seg
            basis = max(1, at - base)
            noise = var * (1.0 / since + 1.0 / basis) / (realized * realized)
            misses.append(max(0.0, math.log(realized / predicted) ** 2 - noise))
        return sum(misses) / len(misses) if len(misses) >= 3 else 0.0

    def variance(self, step_s: float) -> tuple[float, float, int]:
        """(long-run variance per step, effective n behind the mean, df)."""
        end = len(self._x)
        if self.bursty and self._origin is not None:
            var, df = batch_means_variance(self._cum, self._origin, end)
            if df > 0:
                return var, float(end - self._origin), df
        if self._cut is not None:
            var, df = batch_means_variance(self._cum, self._cut, end)
            if df > 0:
                return var, float(end - self._cut), df
        window = self._x[max(self._seg, end - _PROVISIONAL_WINDOW) : end]
        if len(window) >= 2:
            mu = sum(window) / len(window)
            var = sum((v - mu) ** 2 for v in window) / (len(window) - 1)
            return var, float(len(window)), len(window) - 1
        return (0.5 * step_s) ** 2, 1.0, 1
