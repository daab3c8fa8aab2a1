"""``EtaTracker``: feeds a run's events (``core/events.py``) to an ``EtaEstimator``.

A language model's steps carry their padded tokens and its ``EpochPlanned`` events the
tokens of the steps to come; the estimator then costs steps by their tokens.

Times are the events' wall-clock seconds, so ``estimate(now)`` takes ``time.time()``-style
seconds. The tracker also remembers the first estimate it gave once the run was stable,
which the dashboard's summary compares with the time the run really took.
"""

from __future__ import annotations

import dataclasses

from ludwig_nb.core import events as ev
from ludwig_nb.core.eta import constants as const
from ludwig_nb.core.eta.estimator import EtaEstimator
from ludwig_nb.core.eta.plan import Costs, Estimate, Schedule

__all__ = ["EtaTracker", "schedule_from_info"]


def schedule_from_info(info: ev.ScheduleInfo) -> Schedule:
    """The estimator's :class:`Schedule` for an event's ``ScheduleInfo``."""
    return Schedule(
        total_steps=info.total_steps,
        epoch_starts=info.epoch_starts,
        evaluations_after=info.evaluations_after,
        checkpoints_after=info.checkpoints_after,
        batch_size=info.batch_size,
        evaluation_batches=info.evaluation_batches,
    )


class EtaTracker:
    """Observes run events and answers :meth:`estimate`; never raises on odd streams.

    Args:
        priors: costs measured by a pilot (see :meth:`EtaEstimator.predict_total`).
    """

    def __init__(self, priors: Costs | None = None) -> None:
        self._priors = priors
        self._est: EtaEstimator | None = None
        self._started_at: float | None = None
        self._paused_at: float | None = None
        self._finished = False
        self._first: Estimate | None = None
        self._duty = 1.0
        self._plans: list[ev.EpochPlanned] = []  # kept for an estimator made later

    @property
    def estimator(self) -> EtaEstimator | None:
        """The estimator of the current run (``None`` before ``RunStarted``)."""
        return self._est

    @property
    def finished(self) -> bool:
        """Has the run finished or failed?"""
        return self._finished

    @property
    def first_estimate(self) -> Estimate | None:
        """The first estimate made once the run was stable (``None`` until then)."""
        return self._first

    @property
    def first_total_s(self) -> float | None:
        """The whole run's duration (seconds) as predicted by :attr:`first_estimate`."""
        if self._first is None or self._started_at is None:
            return None
        return self._first.finish_time - self._started_at

    def observe(self, event: ev.Event) -> None:
        """Take one event; unknown, out-of-order or malformed events are ignored."""
        try:
            self._observe(event)
        except ValueError:  # a non-finite time: the estimate must not take the run down
            return

    def _observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted):
            self._est = EtaEstimator(schedule_from_info(event.schedule), event.time, self._priors)
            self._started_at = event.time if self._started_at is None else self._started_at
            self._finished = False
            for plan in self._plans:
                self._est.plan_tokens(plan.first_step, plan.padded_tokens)
            return
        if isinstance(event, ev.EpochPlanned):
            self._plans.append(event)
        est = self._est
        if est is None:
            return
        if isinstance(event, ev.EpochPlanned):
            est.plan_tokens(event.first_step, event.padded_tokens)
        elif isinstance(event, ev.StepFinished):
            if event.step >= est.steps_done:
                tokens = event.padded_tokens if event.padded_tokens is not None else event.tokens
                est.step_finished(event.step, event.time, tokens)
                if self._first is None and est.state == "stable":
                    self._first = est.estimate(event.time)
        elif isinstance(event, ev.EvaluationFinished):
            est.interval_finished("evaluation", event.start_time, event.time)
        elif isinstance(event, ev.CheckpointSaved):
            est.interval_finished("checkpoint", event.start_time, event.time)
        elif isinstance(event, ev.Paused):
            self._paused_at = event.time
        elif isinstance(event, ev.Resumed):
            est.interval_finished("pause", event.paused_at, event.time)
            self._paused_at = None
        elif isinstance(event, ev.Throttled):
            duty = min(1.0, max(1e-3, event.duty))  # steps take 1/duty as long
            crossed = (duty < 1.0) != (self._duty < 1.0)
            if crossed or abs(duty / self._duty - 1.0) >= const.DUTY_CHANGE:
                est.regime_changed(scale=self._duty / duty)
                self._duty = duty
        elif isinstance(event, ev.OomRecovered):
            est.regime_changed(scale=None)
        elif isinstance(event, ev.GpuSlowdown):
            # the GPU's clocks changed: steps take about the inverse of the clock ratio longer
            ratio = event.clock_ratio
            usable = ratio is not None and 0.05 <= ratio <= 20.0
            est.regime_changed(scale=1.0 / ratio if usable and ratio else None)
        elif isinstance(event, ev.ScheduleChanged):
            est.set_schedule(schedule_from_info(event.schedule))
        elif isinstance(event, ev.RunFinished | ev.RunFailed):
            self._finished = True

    def estimate(self, now: float) -> Estimate | None:
        """The estimate at ``now`` (wall-clock seconds).

        ``None`` before any basis and once the run has ended. While paused the remaining
        time is frozen at the pause.
        """
        if self._est is None or self._finished:
            return None
        if self._paused_at is not None:
            frozen = self._est.estimate(min(now, self._paused_at))
            return None if frozen is None else dataclasses.replace(frozen, at=now)
        return self._est.estimate(now)
