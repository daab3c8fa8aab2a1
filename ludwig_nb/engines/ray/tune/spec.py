"""What the run layer gives a Tune experiment and what it hears back.

:class:`TuneSpec` (the experiment), :class:`TuneHooks` (the search's side, called on the
driver), the picklable :class:`HooksRef` Tune carries instead of the hooks, what the ``ray``
executor runs for each Ludwig name, and the checks for the extras it needs. No Ray import.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "NAMESPACE",
    "TUNE_SCHEDULERS",
    "TUNE_SEARCH_ALGS",
    "HooksRef",
    "TuneHooks",
    "TuneSpec",
    "TuneTrialFailed",
    "optuna_missing",
    "register_hooks",
    "tune_missing",
    "unregister_hooks",
]

#: the Ray namespace of the search's channel actor
NAMESPACE = "ludwig_nb"
#: Ludwig ``search_alg.type`` -> what the ray executor runs
TUNE_SEARCH_ALGS = {
    "random": "BasicVariantGenerator",
    "variant_generator": "BasicVariantGenerator",
    "optuna": "OptunaSearch (TPE)",
}
#: Ludwig ``scheduler.type`` -> the Tune scheduler
TUNE_SCHEDULERS = {
    "fifo": "FIFOScheduler",
    "asha": "AsyncHyperBandScheduler",
    "async_hyperband": "AsyncHyperBandScheduler",
    "hyperband": "AsyncHyperBandScheduler (brackets=3)",
    "hb_bohb": "AsyncHyperBandScheduler (brackets=3)",
    "median_stopping_rule": "MedianStoppingRule",
    "median": "MedianStoppingRule",
}


class TuneTrialFailed(RuntimeError):
    """A Tune trial raised or its actor died; the message says which and why."""


def tune_missing() -> str | None:
    """Why Ray Tune cannot run here (one line naming the extra), or None. No import."""
    if importlib.util.find_spec("ray") is None:
        return 'executor type ray needs Ray Tune: pip install "ludwig_nb[ray]"'
    return None


def optuna_missing() -> str | None:
    """Why ``search_alg: optuna`` cannot run on Ray Tune here, or None. No import."""
    if importlib.util.find_spec("optuna") is None:
        return (
            "search_alg optuna on executor type ray uses Ray Tune's OptunaSearch, which "
            'needs optuna beside Ray: pip install "ludwig_nb[ray,hyperopt]"'
        )
    return None


@dataclasses.dataclass
class TuneSpec:
    """One Tune experiment of a search.

    Attributes:
        name: the search's name (Tune's experiment name starts with it).
        directory: the search directory; Tune's state goes to ``<directory>/ray``.
        parameters: the rendered ``hyperopt.parameters``.
        search_alg: the rendered ``hyperopt.search_alg``.
        scheduler: the rendered ``hyperopt.executor.scheduler``.
        goal: ``minimize`` or ``maximize``.
        metric_path: (split, output feature, metric) of the hyperopt metric.
        num_samples: trials this experiment runs.
        points: parameter points to run first (trials to rerun, ``points_to_evaluate``).
        evaluated: finished trials as (parameters, metric, state), told to a learning
            search algorithm before it suggests anything.
        grid: every point of a pure grid still to run (then ``points`` is ignored).
        max_concurrent: trials at once (None: as many as the resources allow).
        cpus: CPUs per trial (fractions allowed).
        gpus: GPUs per trial (fractions allowed).
        dataset: the table the trials train on (sent once through the object store).
        max_t: evaluations of a full trial (the schedulers' ``max_t`` default).
        seed: the search algorithm's seed.
        storage_path: shared storage the trials write their run folders to (checkpoints,
            model, log: ``<storage_path>/<run id>``), copied home when a trial ends; None:
            the trials write the notebook's run directories (one machine, or the results
            directory itself on storage every node mounts at the same path).
    """

    name: str
    directory: Path
    parameters: dict[str, dict[str, Any]]
    search_alg: dict[str, Any]
    scheduler: dict[str, Any]
    goal: str
    metric_path: tuple[str, str, str]
    num_samples: int
    points: list[dict[str, Any]]
    evaluated: list[tuple[dict[str, Any], float | None, str]]
    grid: list[dict[str, Any]] | None
    max_concurrent: int | None
    cpus: float
    gpus: float
    dataset: Any
    max_t: int
    seed: int | None = None
    storage_path: Path | None = None


class TuneHooks(Protocol):
    """What the search does at each point of a Tune experiment (called on the driver)."""

    def start_trial(self, tune_id: str, params: dict[str, Any], channel: str) -> dict[str, Any]:
        """Create the trial's run (directory and mirror run) and return its assignment.

        The assignment: ``run_dir``, ``run_id``, ``name``, ``config`` (rendered), ``seed``,
        ``threads``, ``device`` and ``control`` (the run's (stop, pause) now: a trial
        started while the search is paused holds before its first step), or
        ``{"refused": message}`` when its config cannot train.
        """
        ...

    def trial_pruned(self, tune_id: str) -> None:
        """The scheduler stopped the trial at its last evaluation."""
        ...

    def trial_cut(self, tune_id: str) -> None:
        """The trial reached the scheduler's ``max_t`` before its plan's end: it stops there."""
        ...

    def trial_ended(self, tune_id: str, error: str | None) -> None:
        """Tune finished the trial (``error``: why it failed, None when it returned)."""
        ...

    def tick(self) -> None:
        """Once per turn of Tune's loop: reap ended trials, watch the time budget."""
        ...

    def may_start(self) -> bool:
        """False while the search is paused or stopping: the scheduler chooses no trial.

        Tune still starts trials already pending; those hold before their first step (the
        ``control`` of their assignment) or stop at once.
        """
        ...

    def should_end(self) -> bool:
        """True once the search is stopping and no trial of it runs any more."""
        ...

    def set_slots(self, slots: int) -> None:
        """How many trials run at once on this Ray (for the search ETA)."""
        ...


#: the hooks of the experiments running in this process, by key (see :class:`HooksRef`)
_HOOKS: dict[str, TuneHooks] = {}


def register_hooks(key: str, hooks: TuneHooks) -> HooksRef:
    """Register ``hooks`` under ``key`` for this process; returns the stand-in Tune carries."""
    _HOOKS[key] = hooks
    return HooksRef(key)


def unregister_hooks(key: str) -> None:
    """Forget the hooks registered under ``key`` (the experiment is over)."""
    _HOOKS.pop(key, None)


class HooksRef:
    """A picklable stand-in for a search's hooks.

    Tune pickles its callbacks, stopper and scheduler with the experiment's state, and the
    search (threads, locks) does not pickle.

    Args:
        key: the key of the hooks in this process's registry.
    """

    def __init__(self, key: str) -> None:
        self.key = key

    def __getattr__(self, name: str) -> Any:
        if name == "key" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(_HOOKS[self.key], name)
