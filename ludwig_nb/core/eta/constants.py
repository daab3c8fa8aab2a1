"""Every tuning constant of the ETA, with its unit and why it has its value.

"Calibration seeds" are the benchmark's seeds 1000-1099 (``python -m benchmarks.eta.run
--first-seed 1000 --seeds 100``); the figures reported use seeds 0-19, so they are not
the ones tuned on. ``python -m benchmarks.eta.ablate`` measures what each mechanism
these constants drive is worth. Constants named after a method (CUSUM, MSER) take the
values of ``shared/design/notes/ETA_METHODS.md`` section 3 unless said otherwise. Every
name here is public; the parts read them as ``const.NAME``, so patching one here (as
``benchmarks/eta/ablate.py`` does) changes it everywhere.
"""

from __future__ import annotations

import math

# ---- warm-up, used in warmup.py
#: Steps per MSER batch mean (MSER-5, White 1997): the method's own batch size.
MSER_BATCH = 5
#: At most this many batch means per MSER pass (count); longer segments use wider
#: batches, so one pass costs O(2000) however long the run.
MSER_MAX_BATCHES = 2000
#: Batch means above ``median + this many MADs`` of the segment's second half are
#: winsorised before MSER (count of normal-scaled MADs), so one straggler batch does not
#: move the cut (ETA_METHODS.md 3.3).
MSER_WINSOR_MADS = 5.0
#: Steps into a segment before the first MSER pass: four batches of 5.
MSER_FIRST = 20
#: MSER and the segment's statistics are revisited each time the segment grows by this
#: fraction: O(1) amortised per step, and a cut taken too early moves on soon.
REVISIT_GROWTH = 0.10
#: MSER must accept a cut on at least this many steps before the run counts as stable
#: (steps): fewer give a cut that is used for the number but revisited.
STABLE_MIN_STEPS = 40

# ---- step time, used in step_time.py
#: One step counts at most this many bulk medians in the mean (ratio): a one-off stall
#: (a recompile, a swap) is not extrapolated over the rest of the run (ETA_METHODS.md 3.2).
STRAGGLER_CAP = 20.0
#: The bulk median looks at the last this many stable steps (steps): bounds its cost.
BULK_WINDOW = 1024
#: Weight (steps) of the straggler share pooled over earlier regimes against a new
#: regime's own. Stragglers are mostly independent of the regime and a few hundred
#: heavy-tailed steps say little about their share: 400 (against 100) cut the error
#: after a change in the heavy-tailed ``realistic`` scenario by ~0.4 points
#: (calibration seeds).
TAIL_PRIOR_STEPS = 400
#: Before a stable cut, the provisional step time is the median of the last this many
#: steps (steps): ETA_METHODS.md 3.3 takes 10; 20 is steadier on noisy CPU traces.
PROVISIONAL_WINDOW = 20
#: Steps before a first provisional number without a prior (steps): the first step is
#: the compile spike, so one more than two is the least a median can ignore it with.
MIN_BASIS = 3
#: "adjusting" lasts at least this many steps into a new regime (steps): the display
#: says the number is fresh (ETA_METHODS.md 5.3: "about 20 steps").
ADJUST_STEPS = 20

#: A level shift at an alarm at least this large (log ratio, 35 %) is a swing; a swing
#: that reverses an earlier one says the load comes and goes (``StepRate.step_s``).
#: 25 % and 50 % gave the same figures.
SWING_LOG = math.log(1.35)

# ---- change detection, used in changes.py
#: Steps per CUSUM observation (their median of log step time): robust to stragglers and
#: less fooled by the short-range correlation of step times than a per-step test.
BLOCK = 8
#: Blocks behind the first reference fit of a segment (count): detection starts
#: ``MIN_REF_BLOCKS * BLOCK`` = 64 steps into a segment.
MIN_REF_BLOCKS = 8
#: The reference is fitted on at most this many recent steps (steps): bounds its cost.
REF_WINDOW = 4096
#: CUSUM slack, in long-run standard deviations of a block median (ETA_METHODS.md 3.5).
CUSUM_K = 0.5
#: CUSUM alarm threshold, same unit. 6 or 7 changed nothing beyond seed noise.
CUSUM_H = 8.0
#: Standardised block medians are clipped to this many standard deviations, so one wild
#: block adds at most ``CUSUM_CLIP - CUSUM_K`` to a sum.
CUSUM_CLIP = 3.0
#: Floor of the CUSUM's spread (log seconds): a perfectly steady run must not alarm on
#: a 2 % wobble.
SIGMA_FLOOR = 0.02
#: Cap on the lag-1 correlation of block medians used to widen the spread (AR(1)
#: long-run factor ``sqrt((1 + rho) / (1 - rho))``, at most 3): step times wander, and
#: neighbouring blocks read as a shift otherwise.
MAX_RHO = 0.8

# ---- self-check, used in selfcheck.py
#: A past prediction is judged on at least this many later steps (steps).
BACKTEST_MIN_STEPS = 20
#: Predictions kept for the self-check (count, the most recent).
BACKTEST_KEEP = 16

# ---- event costs, used in event_costs.py
#: Occurrences behind an event cost (count): the median of the last 3, the first of the
#: run excluded (it carries one-off warm-up; ETA_METHODS.md 3.4).
COST_KEEP = 3
#: Least spread of one occurrence, as a fraction of its cost: three equal evaluations
#: do not make the next one certain.
COST_MIN_SPREAD = 0.05
#: One evaluation batch costs about this fraction of a training step (forward only, ~1/3
#: of forward + backward): the evaluation's prior before one is timed.
EVAL_PRIOR_FACTOR = 0.35

# ---- interval, used in interval.py
#: Scale of the 80 % interval's half-width (ratio), calibrated to ~80 % coverage on the
#: stationary scenarios with calibration seeds 1000-1059 (1.1 before the self-check
#: term, which widens intervals on its own).
INTERVAL_SCALE = 0.8
#: The normal 0.90 quantile: the half-width of a two-sided 80 % interval in sds.
Z80 = 1.2816
#: A pilot's unmodelled error (machine load, data order), as a fraction of the predicted
#: total, in ``EtaEstimator.predict_total``: the pre-flight benchmark's spread.
PILOT_RELATIVE_SD = 0.10

# ---- tracker, used in tracker.py
#: A ``Throttled`` duty cycle that moves by at least this fraction (or crosses 1) starts
#: a new regime: smaller moves are below what the step times would show.
DUTY_CHANGE = 0.1
