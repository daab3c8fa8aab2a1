"""Ludwig's ``scheduler`` as a Tune trial scheduler whose every STOP ends a trial gracefully.

Time is evaluations (``training_iteration``: one ``tune.report`` per evaluation). The
wrapper turns the inner scheduler's STOP into a stop through the channel, so the trial ends
at a step boundary with its checkpoint and model written instead of being killed:

* a STOP before ``max_t`` is a prune (state ``pruned``);
* a STOP at ``max_t`` (ASHA and HyperBand end every trial there) cuts a trial whose plan
  has more evaluations (its trainer's epochs): it stops there and counts as completed, as
  Tune's own trials do at ``max_t``; at its plan's last evaluation it simply ends.
"""

from __future__ import annotations

from typing import Any

from ludwig_nb.engines.ray.tune.channel import ray_get
from ludwig_nb.engines.search_backend import TuneHooks, TuneSpec

__all__ = ["CUT_REASON", "PRUNE_REASON", "budget", "graceful", "last_rung", "scheduler"]

#: the stop reasons a trial's run shows
PRUNE_REASON, CUT_REASON = "pruned", "max_t"
_HYPERBAND = ("asha", "async_hyperband", "hyperband", "hb_bohb")


def last_rung(spec: TuneSpec) -> int:
    """The schedulers' ``max_t`` in evaluations: ``max_t``, else the trainer's epochs."""
    grace = int(spec.scheduler.get("grace_period") or 1)
    return int(spec.scheduler.get("max_t") or max(spec.max_t, grace))


def budget(spec: TuneSpec) -> int | None:
    """The evaluations after which the scheduler ends every trial (``max_t``), or None.

    Only ASHA and HyperBand have one; the median stopping rule and FIFO do not.
    """
    return last_rung(spec) if spec.scheduler.get("type", "fifo") in _HYPERBAND else None


def scheduler(spec: TuneSpec) -> Any:
    """Ludwig's ``scheduler`` as a Tune scheduler; time is evaluations.

    ``hyperband`` runs as asynchronous HyperBand (3 brackets): Tune's synchronous
    HyperBandScheduler pauses trials between rungs, which a trial that ends gracefully
    cannot be; ASHA stops instead of pausing.
    """
    from ray.tune.schedulers import AsyncHyperBandScheduler, FIFOScheduler, MedianStoppingRule

    config = spec.scheduler
    kind = config.get("type", "fifo")
    grace = int(config.get("grace_period") or 1)
    max_t = last_rung(spec)
    if kind in _HYPERBAND:
        brackets = int(config.get("brackets") or (1 if kind.startswith("a") else 3))
        return AsyncHyperBandScheduler(
            time_attr="training_iteration",
            max_t=max_t,
            grace_period=min(grace, max_t),
            reduction_factor=float(
                config.get("reduction_factor") or (4 if kind.startswith("a") else 3)
            ),
            brackets=brackets,
        )
    if kind in ("median_stopping_rule", "median"):
        return MedianStoppingRule(
            time_attr="training_iteration",
            grace_period=grace,
            min_samples_required=int(config.get("min_samples_required") or 3),
        )
    return FIFOScheduler()


def graceful(inner: Any, hooks: TuneHooks, actor: Any, max_t: int | None) -> Any:
    """``inner`` with every STOP turned into a graceful stop through the channel.

    Each STOP before ``max_t`` (every STOP without one, see :func:`budget`) is recorded as
    a prune, one at ``max_t`` before the trial's plan ends as a cut; no trial is chosen
    while the search is paused or stopping.
    """
    limit = float("inf") if max_t is None else max_t
    from ray.tune.schedulers import TrialScheduler

    def stop(trial_id: str, reason: str) -> None:
        ray_get(actor.set_control.remote(trial_id, reason, None))

    class _Graceful(TrialScheduler):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner
            self.stopped: set[str] = set()

        @property
        def metric(self) -> Any:
            return self.inner.metric

        def set_search_properties(self, metric: Any, mode: Any, **spec: Any) -> bool:
            ok: bool = self.inner.set_search_properties(metric, mode, **spec)
            return ok

        def on_trial_add(self, controller: Any, trial: Any) -> None:
            self.inner.on_trial_add(controller, trial)

        def on_trial_error(self, controller: Any, trial: Any) -> None:
            self.inner.on_trial_error(controller, trial)

        def on_trial_result(self, controller: Any, trial: Any, result: dict[str, Any]) -> str:
            decision = self.inner.on_trial_result(controller, trial, result)
            if decision != TrialScheduler.STOP or result.get("done"):
                return str(decision)
            at, planned = result.get("training_iteration", 0), result.get("planned") or 0
            if trial.trial_id not in self.stopped and (at < limit or at < planned):
                self.stopped.add(trial.trial_id)
                if at < limit:
                    hooks.trial_pruned(trial.trial_id)
                    stop(trial.trial_id, PRUNE_REASON)
                else:  # its budget ends before its plan does
                    hooks.trial_cut(trial.trial_id)
                    stop(trial.trial_id, CUT_REASON)
            return str(TrialScheduler.CONTINUE)  # the trial ends itself, gracefully

        def on_trial_complete(self, controller: Any, trial: Any, result: Any) -> None:
            self.inner.on_trial_complete(controller, trial, result)

        def on_trial_remove(self, controller: Any, trial: Any) -> None:
            self.inner.on_trial_remove(controller, trial)

        def choose_trial_to_run(self, controller: Any) -> Any:
            if not hooks.may_start():
                return None
            return self.inner.choose_trial_to_run(controller)

        def debug_string(self) -> str:
            return str(self.inner.debug_string())

    return _Graceful()
