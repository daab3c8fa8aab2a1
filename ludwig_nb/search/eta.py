"""When a hyperparameter search will be done: a per-trial cost model over the finished trials.

Trials of one search cost very different times: the batch size alone changes the steps per
epoch (and the time per step), so a mean of the finished durations is a poor guess for the
next trial (its error was 114 % at a quarter of a search whose trials varied ~16x). Here a
trial's cost is modelled from what its parameters imply (:class:`TrialShape`: batch size,
planned steps, evaluations):

* the time of one step as a power law of the batch size, ``c * batch_size ** p``, fitted on
  a log scale over the measured times per step of finished and running trials (their
  training time, evaluations and checkpoints aside, over their steps; one batch size
  seen: its step time for all);
* the rest of a trial (setup, evaluations, checkpoints, the final save) as ``a + b *
  evaluations``, fitted over the finished trials' durations minus their steps' time;
* both lines robustly (Theil-Sen: medians of pairwise slopes), so that one odd trial (the
  first of a kernel pays torch's import) does not set them;
* the share of its planned steps a trial really trains (early stopping, pruning), the mean
  over finished trials.

A queued trial costs the mean prediction over shapes drawn from the search space (the
caller draws them); a running trial costs its own stable-phase ETA, or the prediction minus
its elapsed time before it has one. Queued trials then go onto ``concurrency`` slots, each
to the slot that frees first. Pure arithmetic (stdlib only), shared by the panel, the handle
and the benchmark.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import statistics
from collections.abc import Sequence

__all__ = [
    "FinishedTrial",
    "RunningTrial",
    "TrialCostModel",
    "TrialShape",
    "search_remaining_s",
]


@dataclasses.dataclass(frozen=True)
class TrialShape:
    """What a trial's parameters imply before it runs.

    Attributes:
        batch_size: rows per training step.
        planned_steps: steps its plan has, without early stopping.
        evaluations: evaluations its plan has.
    """

    batch_size: int
    planned_steps: int
    evaluations: int


@dataclasses.dataclass(frozen=True)
class FinishedTrial:
    """A trial that ended (completed, pruned, failed: they all cost time).

    Attributes:
        duration_s: its wall-clock duration, seconds.
        shape: its plan (None when unknown, e.g. it failed before it had one).
        steps: steps it trained (None: unknown).
        step_s: its training time per step (evaluations and checkpoints aside), seconds
            (None: unknown).
    """

    duration_s: float
    shape: TrialShape | None = None
    steps: int | None = None
    step_s: float | None = None


@dataclasses.dataclass(frozen=True)
class RunningTrial:
    """A trial in flight.

    Attributes:
        elapsed_s: seconds since it started.
        remaining_s: its own ETA, seconds (None: none yet).
        shape: its plan (None: not known yet).
        step_s: its training time per step so far, seconds (None: not measured yet).
    """

    elapsed_s: float
    remaining_s: float | None
    shape: TrialShape | None = None
    step_s: float | None = None


def _robust_line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Intercept and slope of ``y = a + b * x`` by Theil-Sen.

    The median of the pairwise slopes, then the median intercept: one outlier, such as the
    first trial of a kernel paying torch's import, does not move it. A flat line through the
    median when the xs do not vary.
    """
    slopes = [
        (ys[j] - ys[i]) / (xs[j] - xs[i])
        for i in range(len(xs))
        for j in range(i + 1, len(xs))
        if abs(xs[j] - xs[i]) > 1e-12
    ]
    if not slopes:
        return statistics.median(ys), 0.0
    slope = statistics.median(slopes)
    return statistics.median(y - slope * x for x, y in zip(xs, ys, strict=True)), slope


@dataclasses.dataclass(frozen=True)
class TrialCostModel:
    """Seconds a trial of a given shape costs (see the module docstring).

    Attributes:
        log_c: log of the step time (s) at batch size 1 of the power law.
        power: exponent of the batch size in the step time.
        overhead_a: seconds of a trial besides its steps, fixed part.
        overhead_b: seconds of a trial besides its steps, per evaluation.
        completion: mean share of its planned steps a finished trial trained (0-1].
    """

    log_c: float
    power: float
    overhead_a: float
    overhead_b: float
    completion: float

    @classmethod
    def fit(
        cls, finished: Sequence[FinishedTrial], running: Sequence[RunningTrial] = ()
    ) -> TrialCostModel | None:
        """Fit the model over the finished trials (and the running ones' step times).

        Args:
            finished: the trials that ended.
            running: the trials in flight (only their measured step times are used).

        Returns:
            The model, or None while no finished trial has a known shape, steps and step
            time (then nothing can be said about another trial's cost).
        """
        measured = [t for t in finished if _measured(t)]
        if not measured:
            return None
        pairs = [(t.shape.batch_size, t.step_s) for t in measured]  # type: ignore[union-attr]
        pairs += [
            (r.shape.batch_size, r.step_s)
            for r in running
            if r.shape is not None and r.shape.batch_size > 0 and r.step_s and r.step_s > 0
        ]
        log_b = [math.log(b) for b, _ in pairs]
        log_s = [math.log(s) for _, s in pairs]  # type: ignore[arg-type]
        log_c, power = _robust_line(log_b, log_s)
        if power < 0:  # a larger batch never steps faster: noise, read it as flat
            log_c, power = statistics.median(log_s), 0.0
        overheads = [max(0.0, t.duration_s - t.steps * t.step_s) for t in measured]  # type: ignore[operator]
        evaluations = [float(t.shape.evaluations) for t in measured]  # type: ignore[union-attr]
        a, b = _robust_line(evaluations, overheads)
        if b < 0 or a < 0:  # neither part can be negative: the median overhead, fixed
            a, b = statistics.median(overheads), 0.0
        shares = [
            min(1.0, t.steps / t.shape.planned_steps)  # type: ignore[operator,union-attr]
            for t in measured
            if t.shape.planned_steps > 0  # type: ignore[union-attr]
        ]
        completion = statistics.fmean(shares) if shares else 1.0  # a mean: prunes add up
        return cls(log_c, power, a, b, completion)

    def step_s(self, batch_size: int) -> float:
        """Seconds one step at ``batch_size`` takes."""
        return math.exp(self.log_c + self.power * math.log(max(1, batch_size)))

    def predict(self, shape: TrialShape) -> float:
        """Seconds a whole trial of ``shape`` costs, expected share of its steps included."""
        share = self.completion
        steps = shape.planned_steps * share
        return (
            self.overhead_a
            + self.overhead_b * shape.evaluations * share
            + steps * (self.step_s(shape.batch_size))
        )


def _measured(trial: FinishedTrial) -> bool:
    shape = trial.shape
    return (
        shape is not None
        and shape.batch_size > 0
        and trial.steps is not None
        and trial.steps > 0
        and trial.step_s is not None
        and trial.step_s > 0
    )


def search_remaining_s(
    finished: Sequence[FinishedTrial],
    running: Sequence[RunningTrial],
    queued: int,
    concurrency: int = 1,
    queued_shapes: Sequence[TrialShape] = (),
) -> float | None:
    """Seconds until the search is done, or None before there is any basis.

    Args:
        finished: the trials that ended.
        running: the trials in flight.
        queued: how many trials have not started yet.
        concurrency: trials that run at once (slots).
        queued_shapes: shapes drawn from the search space; a queued trial costs their mean
            prediction. Empty (or no model yet): it costs the mean finished duration.

    Returns:
        Seconds from now, or None while neither a finished trial nor a running trial's
        own ETA gives a basis.
    """
    model = TrialCostModel.fit(finished, running)
    typical = statistics.fmean(t.duration_s for t in finished) if finished else None
    in_flight = []
    for trial in running:
        remaining = _running_remaining(trial, model, typical)
        if remaining is None:
            return None
        in_flight.append(remaining)
    if not queued:
        return max(in_flight, default=0.0)
    if model is not None and queued_shapes:
        each: float | None = statistics.fmean(model.predict(s) for s in queued_shapes)
    else:
        each = typical
    if each is None:
        return None
    return _schedule(in_flight, [each] * queued, max(1, concurrency))


def _running_remaining(
    trial: RunningTrial, model: TrialCostModel | None, typical: float | None
) -> float | None:
    if trial.remaining_s is not None:
        return max(0.0, trial.remaining_s)
    if model is not None and trial.shape is not None:
        return max(0.0, model.predict(trial.shape) - trial.elapsed_s)
    if typical is not None:
        return max(0.0, typical - trial.elapsed_s)
    return None


def _schedule(in_flight: Sequence[float], costs: Sequence[float], slots: int) -> float:
    """When the last trial ends.

    Running trials hold their slots, each queued trial takes the slot that frees first.
    """
    busy = sorted(in_flight)
    # more in flight than slots (a lowered limit): a slot frees only as the surplus ends
    free = [0.0] * (slots - len(busy)) + busy if len(busy) < slots else busy[-slots:]
    heapq.heapify(free)
    end = max(in_flight, default=0.0)
    for cost in costs:
        start = heapq.heappop(free)
        heapq.heappush(free, start + cost)
        end = max(end, start + cost)
    return end
