"""Time to completion from stable-phase step timings: ``EtaEstimator``.

Pure and clock-free: the engine (through :class:`ludwig_nb.core.eta_events.EtaTracker`)
tells the estimator when each step ended and when each evaluation, checkpoint or pause
began and ended, in seconds on any one clock, and asks ``estimate(now)``.

The method (``shared/design/notes/ETA_METHODS.md``, section 3.7)::

    remaining = regular steps left x step time              (eta_rate.StepRate)
              + epoch starts left x cost(epoch start)
              + evaluations left x cost(evaluation)
              + checkpoints left x cost(checkpoint)
              - the part of the item in progress already spent

* **Step time, warm-up, regimes**: :class:`ludwig_nb.core.eta_rate.StepRate` (MSER-5,
  robust bulk x straggler share, block CUSUM with new segments; under load that comes
  and goes, the long-run mean); its state is the estimate's: ``"warming_up"`` (with a
  provisional number), ``"stable"``, ``"adjusting"``.
* **Scheduled events**: each class is costed as the median of its last 3 occurrences
  excluding the first (which carries one-off warm-up). Before any occurrence a prior is
  used (a pilot's ``Costs``, or for evaluations ``evaluation_batches x 0.35 x step``);
  with only the first seen, the geometric mean of it and the prior.
* **Pauses** are excluded from the rate and not extrapolated.
* **Interval**: 80 %, from the long-run variance by batch means (error of the mean plus
  future noise), the spread of event costs, a drift term while warming up or adjusting,
  and the run's own record: how far its past step-time predictions missed beyond what
  noise explains (``StepRate.level_error``), so a run whose level has wandered or changed
  gets a wider interval than a steady one; scaled by a factor calibrated on the
  benchmark's calibration seeds.

O(1) amortised per step; ``estimate`` costs O(sqrt(n)) plus a median over at most 1024
steps, fine at a few calls per second.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ludwig_nb.core.eta_rate import EtaState, StepRate
from ludwig_nb.core.eta_stats import MAD_TO_SD, mad, median, t_quantile_90

__all__ = [
    "Costs",
    "Estimate",
    "EtaEstimator",
    "EtaState",
    "EtaTracker",
    "IntervalKind",
    "Schedule",
]

if TYPE_CHECKING:
    from ludwig_nb.core.eta_events import EtaTracker


def __getattr__(name: str) -> Any:
    # ``EtaTracker`` lives in eta_events (which imports this module); re-exported lazily
    # so that ``from ludwig_nb.core.eta import EtaTracker`` works (docs/CONTRACTS.md).
    if name == "EtaTracker":
        from ludwig_nb.core.eta_events import EtaTracker

        return EtaTracker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


IntervalKind = Literal["evaluation", "checkpoint", "pause"]

_COSTED = ("evaluation", "checkpoint", "epoch_start")
# Calibrated to ~80 % coverage on the benchmark's stationary scenarios with calibration
# seeds 1000-1059 (the reported benchmark uses other seeds). It was 1.1 before the
# backtest term (StepRate.level_error), which widens intervals on its own.
_INTERVAL_SCALE = 0.8
_EVAL_PRIOR_FACTOR = 0.35  # an eval batch ~ forward only ~ 1/3 of a training step
# Relative drift allowance (fraction of the remaining time) while not stable: the
# provisional number is known to be biased (a ramp, a fresh regime).
_DRIFT = {"stable": 0.0, "adjusting": 0.05, "warming_up": 0.15}


def _sorted_unique(values: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted({int(v) for v in values}))


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The plan of a run, 0-based step indices.

    ``total_steps``: steps in the run (with early stopping, the upper bound).
    ``epoch_starts``: first step of each epoch. ``evaluations_after`` /
    ``checkpoints_after``: steps after which an evaluation / checkpoint runs.
    ``batch_size`` (optional): a change of it in :meth:`EtaEstimator.set_schedule` starts
    a new regime at once. ``evaluation_batches`` (optional) sizes the evaluation prior.
    Raises ``ValueError`` on a negative ``total_steps``.
    """

    total_steps: int
    epoch_starts: tuple[int, ...] = ()
    evaluations_after: tuple[int, ...] = ()
    checkpoints_after: tuple[int, ...] = ()
    batch_size: int = 0
    evaluation_batches: int = 0

    def __post_init__(self) -> None:
        if self.total_steps < 0:
            raise ValueError(f"total_steps must be >= 0, got {self.total_steps}")
        for name in ("epoch_starts", "evaluations_after", "checkpoints_after"):
            object.__setattr__(self, name, _sorted_unique(getattr(self, name)))


@dataclasses.dataclass(frozen=True)
class Costs:
    """Per-occurrence costs in seconds, measured by a pilot or assumed; ``None`` = unknown.

    ``step_s``: one regular training step. ``evaluation_s`` / ``checkpoint_s``: one
    evaluation / checkpoint. ``epoch_start_s``: the first step of an epoch (whole step).
    """

    step_s: float | None = None
    evaluation_s: float | None = None
    checkpoint_s: float | None = None
    epoch_start_s: float | None = None


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Time to completion at ``at`` (seconds on the caller's clock).

    ``remaining_s`` and the 80 % interval ``low_s``..``high_s`` are seconds from ``at``
    (``0 <= low_s <= remaining_s <= high_s``). ``step_s`` is the step time in use;
    ``breakdown`` splits ``remaining_s`` (before the in-progress allowance) into
    ``steps``, ``epoch_starts``, ``evaluations`` and ``checkpoints`` seconds.
    """

    remaining_s: float
    low_s: float
    high_s: float
    state: EtaState
    at: float
    step_s: float
    steps_done: int = 0
    breakdown: Mapping[str, float] = dataclasses.field(default_factory=dict)

    @property
    def finish_time(self) -> float:
        """Predicted end, on the caller's clock (seconds)."""
        return self.at + self.remaining_s


@dataclasses.dataclass(frozen=True)
class _Cost:
    value: float
    sd: float  # spread of one occurrence, seconds
    n: int  # occurrences behind ``value`` (0 = prior)


class EtaEstimator:
    """Online time-to-completion estimator; see the module docstring for the method.

    ``start_time``: when the run's first step began (seconds, any monotonic or wall clock,
    the same one for every call). ``priors``: costs to use before they are observed (a
    pilot run's measurements, see :meth:`predict_total`).
    """

    def __init__(self, schedule: Schedule, start_time: float, priors: Costs | None = None) -> None:
        self._schedule = schedule
        self._priors = priors or Costs()
        self._es_set = frozenset(schedule.epoch_starts)
        self._rate = StepRate(self._priors.step_s)
        self._boundary = start_time
        self._last_step = -1
        self._first_step: int | None = None
        self._events: dict[str, list[float]] = {k: [] for k in _COSTED}
        self._done_after: dict[str, int] = {"evaluation": -2, "checkpoint": -2}

    # -- inputs ----------------------------------------------------------------------
    @property
    def schedule(self) -> Schedule:
        return self._schedule

    def set_schedule(self, schedule: Schedule) -> None:
        """Adopt a new plan, keeping what was learned (step time, event costs).

        If both plans name a batch size and it changed, a new regime starts at the next
        step; until it has data, the step time is scaled by the batch-size ratio.
        """
        old = self._schedule.batch_size
        self._schedule = schedule
        self._es_set = frozenset(schedule.epoch_starts)
        if old > 0 and schedule.batch_size > 0 and schedule.batch_size != old:
            self._rate.new_regime(scale=schedule.batch_size / old)

    def regime_changed(self, scale: float | None = None) -> None:
        """A known change of pace (the throttle's duty cycle, a micro-batch split) starts
        a new regime at the next step; until it has steps, the step time is the current
        one times ``scale`` (None: unknown)."""
        self._rate.new_regime(scale=scale)

    def step_finished(self, step: int, end_time: float) -> None:
        """Step ``step`` (0-based) ended at ``end_time`` seconds. Steps come in order;
        raises ``ValueError`` for a step not after the previous one or a time that is
        not a finite number."""
        if not math.isfinite(end_time):
            raise ValueError(f"step {step}: end time {end_time!r} is not a finite number")
        if step <= self._last_step:
            raise ValueError(f"step {step} is not after step {self._last_step}")
        gap = 1 if self._last_step < 0 else step - self._last_step
        duration = max(0.0, end_time - self._boundary) / gap
        self._boundary = max(self._boundary, end_time)
        self._last_step = step
        if self._first_step is None:
            self._first_step = step
        elif step in self._es_set:
            self._events["epoch_start"].append(duration)
            return
        self._rate.add(duration)

    def interval_finished(self, kind: IntervalKind, start_time: float, end_time: float) -> None:
        """A gap between steps: ``"evaluation"`` and ``"checkpoint"`` are costed for the
        future; ``"pause"`` is excluded and not extrapolated. Raises ``ValueError`` on an
        unknown kind or non-finite times."""
        if kind not in ("evaluation", "checkpoint", "pause"):
            raise ValueError(f"unknown interval kind {kind!r}")
        if not (math.isfinite(start_time) and math.isfinite(end_time)):
            raise ValueError(f"{kind}: times {start_time!r}..{end_time!r} are not finite")
        if kind != "pause":
            self._events[kind].append(max(0.0, end_time - start_time))
            self._done_after[kind] = self._last_step
        self._boundary = max(self._boundary, end_time)

    # -- state -----------------------------------------------------------------------
    @property
    def state(self) -> EtaState:
        """``"warming_up"`` before the first stable segment, ``"adjusting"`` shortly after
        a regime change, else ``"stable"``."""
        return self._rate.state

    @property
    def steps_done(self) -> int:
        return self._last_step + 1

    def _cost(self, kind: str, step_s: float) -> _Cost:
        seen = self._events[kind]
        if len(seen) >= 2:
            used = seen[1:][-3:]
            value = median(used)
            spread = MAD_TO_SD * mad(used, value) if len(used) >= 3 else abs(used[-1] - used[0])
            return _Cost(value, max(spread, 0.05 * value), len(used))
        prior, informed = self._prior(kind, step_s)
        if seen and informed and prior > 0:
            # The first occurrence carries one-off warm-up of unknown size: meet an
            # informed prior half-way (geometric mean), the disagreement as the spread.
            value = math.sqrt(prior * seen[0]) if seen[0] > 0 else 0.0
            return _Cost(value, max(0.25 * value, 0.5 * abs(seen[0] - prior)), 1)
        if seen:
            return _Cost(seen[0], 0.5 * seen[0], 1)
        return _Cost(prior, prior, 0)

    def _prior(self, kind: str, step_s: float) -> tuple[float, bool]:
        """(seconds per occurrence before any is seen, whether it rests on information:
        a pilot's measurement or the evaluation's batch count, rather than a default)."""
        p = self._priors
        if kind == "evaluation":
            if p.evaluation_s is not None:
                return p.evaluation_s, True
            batches = self._schedule.evaluation_batches
            return batches * _EVAL_PRIOR_FACTOR * step_s, batches > 0
        if kind == "checkpoint":
            return (p.checkpoint_s or 0.0), p.checkpoint_s is not None
        if p.epoch_start_s is not None:
            return p.epoch_start_s, True
        return step_s, False

    def _left(self, kind: str, after: tuple[int, ...]) -> int:
        """Occurrences of ``kind`` still to come (one pending after the last step counts)."""
        sched, last = self._schedule, self._last_step
        count = bisect.bisect_left(after, sched.total_steps) - bisect.bisect_right(after, last)
        idx = bisect.bisect_left(after, last)
        pending = idx < len(after) and after[idx] == last and self._done_after[kind] != last
        return max(0, count) + (1 if pending and last < sched.total_steps else 0)

    def estimate(self, now: float) -> Estimate | None:
        """The estimate at ``now`` (seconds, same clock), or ``None`` before any basis."""
        step_s = self._rate.step_s()
        if step_s is None:
            return None
        sched = self._schedule
        nxt = self._last_step + 1
        steps_left = max(0, sched.total_steps - nxt)
        es = sched.epoch_starts
        es_left = max(0, bisect.bisect_left(es, sched.total_steps) - bisect.bisect_left(es, nxt))
        regular_left = steps_left - es_left
        costs = {k: self._cost(k, step_s) for k in _COSTED}
        counts = {
            "epoch_start": es_left,
            "evaluation": self._left("evaluation", sched.evaluations_after),
            "checkpoint": self._left("checkpoint", sched.checkpoints_after),
        }
        parts = {
            "steps": regular_left * step_s,
            "epoch_starts": es_left * costs["epoch_start"].value,
            "evaluations": counts["evaluation"] * costs["evaluation"].value,
            "checkpoints": counts["checkpoint"] * costs["checkpoint"].value,
        }
        total = sum(parts.values())
        allowance = min(max(0.0, now - self._boundary), self._next_cost(counts, costs, step_s))
        remaining = max(0.0, total - allowance)
        var, n_eff, df = self._rate.variance(step_s)
        variance = regular_left**2 * var / n_eff + regular_left * var
        for kind in _COSTED:
            c, r = costs[kind], counts[kind]
            variance += r * c.sd**2 + r * r * c.sd**2 / max(1, c.n)
        state = self.state
        variance += (_DRIFT[state] * remaining) ** 2
        # The run's own record: how far its past step-time predictions missed beyond noise.
        variance += self._rate.level_error(var) * parts["steps"] ** 2
        half = _INTERVAL_SCALE * t_quantile_90(df) * math.sqrt(variance) if remaining > 0 else 0.0
        return Estimate(
            remaining_s=remaining,
            low_s=max(0.0, remaining - half),
            high_s=remaining + half,
            state=state,
            at=now,
            step_s=step_s,
            steps_done=self.steps_done,
            breakdown=parts,
        )

    def _next_cost(self, counts: dict[str, int], costs: dict[str, _Cost], step_s: float) -> float:
        """Seconds the in-progress item (pending evaluation/checkpoint or next step) costs."""
        last = self._last_step
        for kind, after in (
            ("evaluation", self._schedule.evaluations_after),
            ("checkpoint", self._schedule.checkpoints_after),
        ):
            idx = bisect.bisect_left(after, last)
            if idx < len(after) and after[idx] == last and self._done_after[kind] != last:
                return costs[kind].value
        if last + 1 >= self._schedule.total_steps:
            return 0.0
        if last + 1 in self._es_set:
            return costs["epoch_start"].value
        return step_s

    # -- pre-flight ------------------------------------------------------------------
    @staticmethod
    def predict_total(
        schedule: Schedule,
        costs: Costs,
        *,
        step_sd_s: float = 0.0,
        warmup_s: float = 0.0,
        relative_sd: float = 0.10,
    ) -> Estimate:
        """Predict a whole run's duration before it starts, from a pilot's measurements.

        ``costs.step_s`` (required) is the stable step time; missing evaluation /
        checkpoint / epoch-start costs follow the live priors. ``step_sd_s`` is the
        per-step spread, ``warmup_s`` the extra time of the first steps (compile, caches),
        ``relative_sd`` the unmodelled error of a pilot (machine load, data order) as a
        fraction of the total. Returns an :class:`Estimate` at ``at = 0`` whose
        ``remaining_s`` is the whole run in seconds. Raises ``ValueError`` without a step
        time. The same ``costs`` can seed a live estimator (``priors=``).
        """
        if costs.step_s is None or costs.step_s <= 0:
            raise ValueError("predict_total needs a positive costs.step_s")
        est = EtaEstimator(schedule, 0.0, priors=costs)
        base = est.estimate(0.0)
        if base is None:  # pragma: no cover - step_s is set, so there is a basis
            raise ValueError("no basis for a prediction")
        parts = dict(base.breakdown)
        parts["warmup"] = warmup_s
        total = sum(parts.values())
        steps = schedule.total_steps
        variance = steps * step_sd_s**2 + (relative_sd * total) ** 2
        half = 1.2816 * math.sqrt(variance)
        return Estimate(
            remaining_s=total,
            low_s=max(0.0, total - half),
            high_s=total + half,
            state="warming_up",
            at=0.0,
            step_s=costs.step_s,
            steps_done=0,
            breakdown=parts,
        )
