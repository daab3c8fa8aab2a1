"""What an engine offers a hyperparameter search whose trials it schedules itself.

A search's ``executor: {type: ray}`` runs its trials as one Ray Tune experiment. The search
(``ludwig_nb.search``) asks the engine of that name for its ``SearchBackend``
(``Engine.search_backend()``, engines/base.py), describes the experiment as a
:class:`TuneSpec` and hears back through :class:`TuneHooks`: the search never imports an
engine's modules, and the engine never imports the search.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Protocol

__all__ = ["TuneHooks", "TuneSpec"]


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
