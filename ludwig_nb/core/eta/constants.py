"""Every tuning constant of the ETA, with its unit and why it has its value.

Calibration seeds are the benchmark's 1000-1099 (``python -m benchmarks.eta.run
--first-seed 1000 --seeds 100``); reported figures use seeds 0-19. Method constants
(MSER, CUSUM) take ETA_METHODS.md section 3's values unless said otherwise. The parts
read them as ``const.NAME``, so patching one here (``benchmarks/eta/ablate.py``) changes
it everywhere.
"""

from __future__ import annotations

import math

# ---- warm-up, used in stats.py and step_time.py
#: Steps per MSER batch mean (MSER-5, White 1997).
MSER_BATCH = 5
#: At most this many batch means per MSER pass (count): longer segments use wider ones.
MSER_MAX_BATCHES = 2000
#: Batch means above ``median + this many MADs`` (normal-scaled) of the segment's second
#: half are winsorised first, so one straggler batch does not move the cut.
MSER_WINSOR_MADS = 5.0
#: Steps into a segment before the first MSER pass: four batches of 5.
MSER_FIRST = 20
#: MSER and the self-check are revisited each time the segment grows by this fraction.
REVISIT_GROWTH = 0.10
#: A cut accepted on at least this many steps makes the run stable (steps).
STABLE_MIN_STEPS = 40

# ---- step time, used in step_time.py
#: One step counts at most this many bulk medians (ratio): a one-off stall is not
#: extrapolated over the rest of the run.
STRAGGLER_CAP = 20.0
#: The bulk median looks at the last this many stable steps (steps): bounds its cost.
BULK_WINDOW = 1024
#: Weight (steps) of the straggler share pooled over earlier regimes against a new
#: regime's own: 400 (against 100) cut the post-change error of ``realistic`` by ~0.4
#: points (calibration seeds).
TAIL_PRIOR_STEPS = 400
#: Before a stable cut, the median of the last this many steps (steps; 3.3 takes 10,
#: 20 is steadier on noisy CPU traces).
PROVISIONAL_WINDOW = 20
#: Steps before a provisional number without a prior: the first is the compile spike.
MIN_BASIS = 3
#: "adjusting" lasts at least this many steps into a new regime (steps; 5.3).
ADJUST_STEPS = 20
#: A level shift at an alarm of at least this (log ratio, 35 %) is a swing; one that
#: reverses an earlier swing says the load comes and goes. 25 and 50 % scored the same.
SWING_LOG = math.log(1.35)

# ---- change detection, used in changes.py
#: Steps per CUSUM observation (their median of log step time): robust to stragglers.
BLOCK = 8
#: Blocks behind a segment's first reference fit: detection starts 64 steps in.
MIN_REF_BLOCKS = 8
#: The reference is fitted on at most this many recent steps: bounds its cost.
REF_WINDOW = 4096
#: CUSUM slack and alarm threshold, in long-run sds of a block median (6 or 7 for the
#: threshold changed nothing beyond seed noise).
CUSUM_K = 0.5
CUSUM_H = 8.0
#: Standardised block medians are clipped to this many sds: one wild block adds at most
#: ``CUSUM_CLIP - CUSUM_K``.
CUSUM_CLIP = 3.0
#: Floor of the CUSUM's spread (log seconds): a steady run must not alarm on 2 %.
SIGMA_FLOOR = 0.02
#: Cap on the lag-1 correlation of block medians that widens the spread (AR(1) factor
#: ``sqrt((1 + rho) / (1 - rho))``, at most 3): wandering step times are not a shift.
MAX_RHO = 0.8
#: Sd of a median of normal data against the mean's (``1.2533 sd / sqrt(n)``).
MEDIAN_SD = 1.2533

# ---- self-check, used in step_time.py
#: A past prediction is judged on at least this many later steps.
BACKTEST_MIN_STEPS = 20
#: Predictions judged (the most recent): 16 of one every 10 % of growth reach back ~4.6x
#: the steps seen. 64 kept the misses of the first cuts and made the harness's interval
#: cover 100 % of i.i.d. runs; 12-24 gave 90-95 % there and 80-83 % on the synthetic
#: stationary runs (calibration seeds).
BACKTEST_KEEP = 16

# ---- event costs, used in event_costs.py
#: The median of the last this many occurrences, the run's first excluded (3.4).
COST_KEEP = 3
#: Least spread of one occurrence, as a fraction of its cost.
COST_MIN_SPREAD = 0.05
#: One evaluation batch costs about this fraction of a training step (forward only):
#: the evaluation's prior before one is timed.
EVAL_PRIOR_FACTOR = 0.35

# ---- interval, used in estimator.py
#: Scale of the 80 % interval's half-width (ratio), ~80 % coverage on the stationary
#: scenarios with calibration seeds 1000-1059.
INTERVAL_SCALE = 0.8
#: The normal 0.90 quantile: the half-width of a two-sided 80 % interval in sds.
Z80 = 1.2816
#: A pilot's unmodelled error (machine load, data order) as a fraction of its total.
PILOT_RELATIVE_SD = 0.10

# ---- token-aware step time, used in tokens.py
#: Huber's tuning constant, in robust sds of the residuals (95 % efficiency on normal
#: noise).
HUBER_C = 1.345
#: Stable steps before the token share is first fitted (steps).
TOKEN_FIT_MIN = 20
#: The token share before it is fitted (0: a step costs the same whatever its tokens, as
#: the step-count ETA).
TOKEN_SHARE_PRIOR = 0.0
#: A re-fitted share that moves by more than this (absolute, 0..1) replays the steps.
TOKEN_SHARE_TOL = 0.02
#: The tokens of the fitted steps must vary by at least this coefficient of variation
#: for a fit: with equal tokens the share does not matter and cannot be measured.
TOKEN_MIN_CV = 0.05
#: Least weight of a step against a typical one (ratio): a tiny last batch still costs.
TOKEN_MIN_WEIGHT = 0.05
#: The quadratic term (attention over long rows) is kept only when it cuts the residual
#: scale of the fit by at least this fraction (and on twice ``TOKEN_FIT_MIN`` steps).
TOKEN_QUADRATIC_GAIN = 0.10

# ---- tracker, used in tracker.py
#: A ``Throttled`` duty cycle that moves by at least this fraction (or crosses 1) starts
#: a new regime.
DUTY_CHANGE = 0.1
