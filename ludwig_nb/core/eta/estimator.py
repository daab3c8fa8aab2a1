"""Time to completion from stable-phase step timings: ``EtaEstimator``.

Clock-free: it is told when each step ended and when each evaluation, checkpoint or
pause began and ended (seconds on one clock) and asked ``estimate(now)``
(ETA_METHODS.md 3.7)::

    remaining = regular steps left x step time              (step_time.StepRate)
              + Σ occurrences left x cost, per event class  (event_costs.EventCosts)
              - the part of the item in progress already spent
    interval  = remaining ± half_width(...)

Pauses are excluded and not extrapolated. O(1) amortised per step.

Steps that come with their tokens (a language model's, ``tokens.py``) are costed by a
step-time model of their tokens summed over the planned steps still to come, in place of
"regular steps left x step time".
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence

from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.event_costs import (
    COSTED,
    Cost,
    EventCosts,
    EventKind,
    is_pending,
    occurrences_left,
)
from ludwig_nb.core.eta.plan import Costs, Estimate, EtaState, IntervalKind, Schedule
from ludwig_nb.core.eta.stats import t_quantile_90
from ludwig_nb.core.eta.step_time import StepRate
from ludwig_nb.core.eta.tokens import Shape, TokenPlan, TokenRate

__all__ = ["EtaEstimator", "half_width"]


class EtaEstimator:
    """Online time-to-completion estimator (the method: the module docstring).

    Args:
        schedule: the run's plan.
        start_time: when the first step began (seconds, the clock of every call).
        priors: costs to use before they are observed (a pilot's, see :meth:`predict_total`).
    """

    def __init__(self, schedule: Schedule, start_time: float, priors: Costs | None = None) -> None:
        self._schedule = schedule
        priors = priors or Costs()
        self._es_set = frozenset(schedule.epoch_starts)
        self._priors = priors
        self._rate: StepRate | TokenRate = StepRate(priors.step_s)
        if priors.token_reference:
            self._rate = TokenRate(priors.step_s, priors.token_reference, _prior_shape(priors))
        self._plan = TokenPlan()
        self._costs = EventCosts(priors)
        self._boundary = start_time
        self._last_step = -1
        self._first_step: int | None = None
        self._done_after: dict[EventKind, int] = {"evaluation": -2, "checkpoint": -2}

    @property
    def schedule(self) -> Schedule:
        """The plan in use."""
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
            # Steps with tokens: their planned tokens already say how much longer they are.
            tokens = isinstance(self._rate, TokenRate)
            self._rate.new_regime(scale=1.0 if tokens else schedule.batch_size / old)

    def plan_tokens(self, first_step: int, tokens: Sequence[float]) -> None:
        """Steps ``first_step``, ``first_step + 1``, ... will compute ``tokens`` padded tokens.

        A later plan for the same steps replaces the earlier one; steps never planned
        count the planned mean (``tokens.py``).
        """
        self._plan.plan(first_step, tokens)

    def regime_changed(self, scale: float | None = None) -> None:
        """A known change of pace (a throttle's duty cycle, a micro-batch split).

        Args:
            scale: a new regime starts at the next step; until it has steps, the step
                time is the current one times this (``None``: unknown).
        """
        self._rate.new_regime(scale=scale)

    def step_finished(self, step: int, end_time: float, tokens: float | None = None) -> None:
        """Step ``step`` (0-based) ended at ``end_time`` seconds; steps come in order.

        ``tokens``: the padded tokens it computed on (``None``: the plan's, if any). A
        run whose first step has tokens is costed by its tokens from then on.

        Raises:
            ValueError: the step is not after the previous one, or the time is not a
                finite number.
        """
        if not math.isfinite(end_time):
            raise ValueError(f"step {step}: end time {end_time!r} is not a finite number")
        if step <= self._last_step:
            raise ValueError(f"step {step} is not after step {self._last_step}")
        gap = 1 if self._last_step < 0 else step - self._last_step
        duration = max(0.0, end_time - self._boundary) / gap
        self._boundary = max(self._boundary, end_time)
        self._last_step = step
        counted = self._step_tokens(step, tokens)
        if self._first_step is None:
            self._first_step = step
        elif step in self._es_set:
            self._costs.add("epoch_start", duration)
            return
        if isinstance(self._rate, TokenRate):
            self._rate.add(duration, counted if counted is not None else self._rate.reference)
        else:
            self._rate.add(duration)

    def _step_tokens(self, step: int, tokens: float | None) -> float | None:
        """The step's tokens: given, else planned, else ``None``.

        The first step with tokens turns token costing on.
        """
        if tokens is not None:
            self._plan.observe(tokens)
        elif self._plan.planned:
            tokens = self._plan.at(step)
        if tokens is not None and self._first_step is None and isinstance(self._rate, StepRate):
            reference = self._plan.mean() or tokens
            self._rate = TokenRate(self._priors.step_s, reference, _prior_shape(self._priors))
        return tokens

    @property
    def token_model(self) -> tuple[float, Shape, float] | None:
        """A language model's step time: ``(seconds at t_ref tokens, its Shape, t_ref)``.

        ``None`` for steps without tokens, or before any basis (``tokens.py``).
        """
        rate = self._rate
        if not isinstance(rate, TokenRate):
            return None
        level = rate.step_s()
        return None if level is None else (level, rate.shape, rate.reference)

    def interval_finished(self, kind: IntervalKind, start_time: float, end_time: float) -> None:
        """A gap between steps, ``start_time``..``end_time`` seconds.

        ``"evaluation"`` and ``"checkpoint"`` are costed for the future; ``"pause"`` is
        excluded and not extrapolated.

        Raises:
            ValueError: an unknown kind, or times that are not finite.
        """
        if kind not in ("evaluation", "checkpoint", "pause"):
            raise ValueError(f"unknown interval kind {kind!r}")
        if not (math.isfinite(start_time) and math.isfinite(end_time)):
            raise ValueError(f"{kind}: times {start_time!r}..{end_time!r} are not finite")
        if kind != "pause":
            self._costs.add(kind, max(0.0, end_time - start_time))
            self._done_after[kind] = self._last_step
        self._boundary = max(self._boundary, end_time)

    @property
    def state(self) -> EtaState:
        """``"warming_up"``, ``"stable"`` or ``"adjusting"`` (see :data:`EtaState`)."""
        return self._rate.state

    @property
    def steps_done(self) -> int:
        """Steps finished so far."""
        return self._last_step + 1

    def estimate(self, now: float) -> Estimate | None:
        """The estimate at ``now`` (seconds, same clock), or ``None`` before any basis."""
        sched, last = self._schedule, self._last_step
        step_s = self._rate.step_s(max(0, sched.total_steps - last - 1))
        if step_s is None:
            return None
        nxt = last + 1
        steps_left = max(0, sched.total_steps - nxt)
        es = sched.epoch_starts
        es_left = max(0, bisect.bisect_left(es, sched.total_steps) - bisect.bisect_left(es, nxt))
        regular_left = steps_left - es_left
        work = self._regular_work(nxt, regular_left)  # steps left, in step_s units
        costs = {k: self._costs.cost(k, step_s, sched.evaluation_batches) for k in COSTED}
        done, total = self._done_after, sched.total_steps
        counts = {
            "epoch_start": es_left,
            "evaluation": occurrences_left(
                sched.evaluations_after, total, last, done["evaluation"]
            ),
            "checkpoint": occurrences_left(
                sched.checkpoints_after, total, last, done["checkpoint"]
            ),
        }
        parts = {
            "steps": work * step_s,
            "epoch_starts": es_left * costs["epoch_start"].value,
            "evaluations": counts["evaluation"] * costs["evaluation"].value,
            "checkpoints": counts["checkpoint"] * costs["checkpoint"].value,
        }
        allowance = min(max(0.0, now - self._boundary), self._next_cost(costs, step_s))
        remaining = max(0.0, sum(parts.values()) - allowance)
        var = self._rate.variance(step_s)
        events = [(counts[k], costs[k]) for k in COSTED]
        error = self._rate.level_error(var[0])
        half = half_width(remaining, work, parts["steps"], var, events, error)
        low, high = max(0.0, remaining - half), remaining + half
        mean_step = step_s  # with tokens: the mean of the steps left
        if isinstance(self._rate, TokenRate) and regular_left > 0:
            mean_step = parts["steps"] / regular_left
        return Estimate(remaining, low, high, self.state, now, mean_step, self.steps_done, parts)

    def _regular_work(self, first: int, regular_left: int) -> float:
        """The regular steps from ``first`` on, counted in steps of ``step_s``.

        Their number; with tokens, their summed weight (planned tokens, epoch starts out).
        """
        rate = self._rate
        if not isinstance(rate, TokenRate) or regular_left <= 0:
            return float(regular_left)
        total, plan = self._schedule.total_steps, self._plan
        if plan.mean() is None:  # no plan and no step yet: typical steps
            return float(regular_left)
        tokens, squares = plan.total(first, total), plan.total(first, total, power=2)
        lo = bisect.bisect_left(self._schedule.epoch_starts, first)
        hi = bisect.bisect_left(self._schedule.epoch_starts, total)
        for es in self._schedule.epoch_starts[lo:hi]:
            n = plan.at(es) or 0.0
            tokens, squares = tokens - n, squares - n * n
        return rate.weights(regular_left, max(0.0, tokens), max(0.0, squares))

    def _next_cost(self, costs: dict[EventKind, Cost], step_s: float) -> float:
        """Seconds the item in progress costs: a pending evaluation or checkpoint, or the next step.

        Time since the last boundary counts against it, up to this much.
        """
        last, sched = self._last_step, self._schedule
        if is_pending(sched.evaluations_after, last, self._done_after["evaluation"]):
            return costs["evaluation"].value
        if is_pending(sched.checkpoints_after, last, self._done_after["checkpoint"]):
            return costs["checkpoint"].value
        if last + 1 >= sched.total_steps:
            return 0.0
        if last + 1 in self._es_set:
            return costs["epoch_start"].value
        if isinstance(self._rate, TokenRate):
            return step_s * self._rate.weight(self._plan.at(last + 1) or self._rate.reference)
        return step_s

    @staticmethod
    def predict_total(
        schedule: Schedule,
        costs: Costs,
        *,
        step_sd_s: float = 0.0,
        warmup_s: float = 0.0,
        relative_sd: float = const.PILOT_RELATIVE_SD,
        step_tokens: Sequence[float] = (),
    ) -> Estimate:
        """A whole run's duration (``remaining_s`` of an estimate at 0) from a pilot's costs.

        Missing costs follow the live priors (the same ``costs`` can seed a live
        estimator); ``step_sd_s`` is the per-step spread, ``warmup_s`` the first steps'
        extra time (seconds), ``relative_sd`` a pilot's unmodelled error (fraction).
        ``step_tokens``: the padded tokens of the run's first steps, when ``costs`` has a
        ``token_reference`` (later steps count their mean).

        Raises:
            ValueError: ``costs.step_s`` is missing or not positive.
        """
        if costs.step_s is None or costs.step_s <= 0:
            raise ValueError("predict_total needs a positive costs.step_s")
        estimator = EtaEstimator(schedule, 0.0, priors=costs)
        if step_tokens:
            estimator.plan_tokens(0, step_tokens)
        base = estimator.estimate(0.0)
        if base is None:  # pragma: no cover - step_s is set, so there is a basis
            raise ValueError("no basis for a prediction")
        parts = {**base.breakdown, "warmup": warmup_s}
        total = sum(parts.values())
        variance = schedule.total_steps * step_sd_s**2 + (relative_sd * total) ** 2
        half = const.Z80 * math.sqrt(variance)
        low, high = max(0.0, total - half), total + half
        return Estimate(total, low, high, "warming_up", 0.0, costs.step_s, 0, parts)


def _prior_shape(priors: Costs) -> Shape | None:
    """The step-time shape a pilot measured, or None (learned from the steps)."""
    if priors.token_share is None:
        return None
    quadratic = min(max(0.0, priors.token_quadratic), priors.token_share)
    return Shape(priors.token_share - quadratic, quadratic)


def half_width(
    remaining_s: float,
    steps_left: float,
    steps_s: float,
    step_noise: tuple[float, float, int],
    events: Iterable[tuple[int, Cost]],
    level_error: float,
) -> float:
    """Half the width of the 80 % interval around ``remaining_s``, in seconds (3.6).

    The variance adds the error of the mean step time and the noise of the
    ``steps_left`` steps (``step_noise`` from :meth:`StepRate.variance`), each event
    class's ``(occurrences left, cost)``, and the self-check's ``level_error`` times the
    steps' ``steps_s`` seconds, squared.
    """
    if remaining_s <= 0:
        return 0.0
    var, n_eff, df = step_noise
    variance = steps_left**2 * var / n_eff + steps_left * var
    for left, cost in events:
        variance += left * cost.sd**2 + left * left * cost.sd**2 / max(1, cost.n)
    variance += level_error * steps_s**2
    return const.INTERVAL_SCALE * t_quantile_90(df) * math.sqrt(variance)
