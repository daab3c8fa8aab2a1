"""The Ray Tune executor (``executor: {type: ray}``): the notebook's side of the experiment.

A search driven by one Ray Tune experiment, which the ``ray`` engine runs (its
:class:`~ludwig_nb.engines.base.SearchBackend`, asked of the engine registry: the search
imports no engine). Each Tune trial becomes a trial of the search exactly as on the
local executor: a record in the table and the journal, and an ordinary run (its run
directory, events, ETA, GPU watch) whose engine mirrors the Tune trial. The journal's
finished trials are never rerun: the experiment runs the trials still to do, the unfinished
ones first with their parameters, and a learning search algorithm is told the finished ones.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.engines.base import Engine, SearchBackend
from ludwig_nb.engines.search_backend import TuneSpec
from ludwig_nb.search.executor import DrivenSearch
from ludwig_nb.search.gpus import trial_memory_limit
from ludwig_nb.search.trial import TrialRecord, trial_end_state

if TYPE_CHECKING:
    from ludwig_nb.config import Config

__all__ = ["TuneExecutor", "search_backend"]


def search_backend(section: dict[str, Any]) -> SearchBackend:
    """The search backend of the engine ``executor.type`` names (``ray``: Ray Tune).

    Raises:
        EngineUnavailable: that engine offers no search backend.
    """
    from ludwig_nb.engines.base import EngineUnavailable
    from ludwig_nb.engines.registry import get_engine

    kind = str(section["executor"].get("type"))
    backend = get_engine(kind).search_backend()
    if backend is None:
        raise EngineUnavailable(f"engine {kind} cannot run a search's trials (executor: {kind})")
    return backend


class TuneExecutor:
    """Trials as the trials of one Ray Tune experiment.

    Args:
        section: the rendered ``hyperopt`` section.
    """

    name = "ray"
    #: ``max_concurrent_trials: auto``: as many as fit on the Ray (Tune finds it: ``set_slots``)
    auto_concurrency = 1

    def __init__(self, section: dict[str, Any]) -> None:
        self.section = section

    def check(self, config: Config, engine: str) -> Engine:
        """Refuse what the trials cannot train, or the search when Ray Tune is missing here.

        The trials train the search backend's loop in Tune's actors, whatever ``engine`` says;
        returns the engine of that loop (the trials' plan).

        Raises:
            ConfigError: what the trials cannot train of ``config`` (located).
            EngineUnavailable: what to install (Ray Tune, or optuna for ``search_alg: optuna``).
        """
        from ludwig_nb.engines.base import EngineUnavailable

        del engine
        backend = search_backend(self.section)
        planner = backend.check(config)
        missing = backend.missing(str(self.section["search_alg"].get("type")))
        if missing is not None:
            raise EngineUnavailable(missing)
        return planner

    def run(self, search: DrivenSearch) -> None:
        """Run ``search``'s remaining trials as one Tune experiment (blocks until it ends).

        Raises:
            RuntimeError: Ray or Tune could not run the experiment.
        """
        backend = search_backend(self.section)
        spec = _spec(search)
        if (spec.grid is not None and not spec.grid) or (
            spec.grid is None and not spec.num_samples
        ):
            return  # nothing left to run
        memory_limit = trial_memory_limit(spec.gpus) if 0 < spec.gpus < 1 else None
        hooks = _Hooks(search, backend, spec, memory_limit)
        try:
            backend.run(spec, hooks)
        finally:
            deadline = time.monotonic() + 120.0  # the mirror runs end once their trial has
            while hooks.live and time.monotonic() < deadline:
                hooks.tick()
                time.sleep(0.05)


class _Hooks:
    """``TuneHooks`` over a search (engines/search_backend.py); called on the driver thread."""

    def __init__(
        self,
        search: DrivenSearch,
        backend: SearchBackend,
        spec: TuneSpec,
        memory_limit: float | None,
    ) -> None:
        self.search, self.backend, self.spec = search, backend, spec
        self.memory_limit = memory_limit
        self.live: dict[str, TrialRecord] = {}  # Tune trial id -> its record, while it runs
        self.errors: dict[str, str] = {}
        self.cut: set[str] = set()  # trials the scheduler's max_t ended before their plan

    def start_trial(self, tune_id: str, params: dict[str, Any], channel: str) -> dict[str, Any]:
        search, storage = self.search, self.spec.storage_path
        record = search.new_trial(self.backend.decode(search.section["parameters"], params))
        seed = search.train_options.get("random_seed")
        options = {"random_seed": seed, "threads": None, "device": None}
        engine = self.backend.trial_engine(channel, tune_id, storage)
        run = search.train_trial(record, engine, options, memory_limit=self.memory_limit)
        if run is None:
            search.finish_trial(record, "failed")
            return {"refused": record.error or "the trial's config was refused"}
        self.live[tune_id] = record
        control = run.control  # paused or stopped already when the search is
        folder = self.backend.trial_folder(storage, run.directory, run.id)
        return {
            "run_dir": str(run.directory),
            "folder": str(folder),
            "run_id": run.id,
            "name": run.name,
            "config": run.config,
            "seed": seed,
            "threads": max(1, int(self.spec.cpus)),
            "device": "cuda" if self.spec.gpus > 0 else "cpu",
            "control": (
                control.stop_reason if control.stop_requested else None,
                "user" if control.paused else None,
            ),
        }

    def trial_pruned(self, tune_id: str) -> None:
        record = self.live.get(tune_id)
        if record is not None:
            self.search.prune(record)

    def trial_cut(self, tune_id: str) -> None:
        self.cut.add(tune_id)

    def trial_ended(self, tune_id: str, error: str | None) -> None:
        if error:
            self.errors[tune_id] = error

    def tick(self) -> None:
        search = self.search
        for tune_id, record in list(self.live.items()):
            run = record.run
            if run is None or not run.is_done:
                continue
            state = record.state if record.state == "pruned" else trial_end_state(run)
            if tune_id in self.cut and state == "stopped":
                state = "completed"  # it ran to the scheduler's max_t, as Tune's trials do
            if state == "failed":
                record.error = str(run.error) if run.error else self.errors.get(tune_id)
            search.finish_trial(record, state)
            del self.live[tune_id]
        if search.over_budget() and not search.is_stopping:
            search.spend_budget()  # as on the local executor: running trials stop too

    def may_start(self) -> bool:
        search = self.search
        return not (search.is_stopping or search.is_paused or search.over_budget())

    def should_end(self) -> bool:
        return self.search.is_stopping and not self.live

    def set_slots(self, slots: int) -> None:
        self.search.set_slots(slots)


def _spec(search: DrivenSearch) -> TuneSpec:
    """The experiment of the search's remaining trials."""
    from ludwig_nb.data import check_dataset

    executor = search.section["executor"]
    evaluated = [(t.params, t.metric, t.state) for t in search.records() if t.counts]
    points = [t.params for t in search.take_unfinished()]  # they rerun first
    ran = [p for p, _, _ in evaluated] + points
    for point in search.section["search_alg"].get("points_to_evaluate") or []:
        if point not in ran:
            points.append(point)
    concurrent = executor.get("max_concurrent_trials")
    return TuneSpec(
        name=search.name,
        directory=search.directory,
        parameters=search.section["parameters"],
        search_alg=search.section["search_alg"],
        scheduler=executor["scheduler"],
        goal=search.goal,
        metric_path=search.metric_path,
        num_samples=max(0, search.total - len(evaluated)),
        points=points,
        evaluated=evaluated,
        grid=_grid(search, evaluated),
        max_concurrent=None if concurrent == "auto" else int(concurrent),
        cpus=float(executor.get("cpu_resources_per_trial") or 1),
        gpus=float(executor.get("gpu_resources_per_trial") or 0),
        dataset=check_dataset(search.rendered or {}, search.dataset),
        max_t=search.max_epochs,
        seed=search.seed,
        storage_path=_storage_path(executor),
    )


def _grid(search: DrivenSearch, evaluated: list[Any]) -> list[dict[str, Any]] | None:
    """A pure grid's points still to run (the grid, ``num_samples`` times, less the done)."""
    if not search.is_grid:
        return None
    from ludwig_nb.search.space import grid_points

    times = int(search.section["executor"]["num_samples"])
    todo = [search.space.decode(p) for p in grid_points(search.space)] * times
    for params, _, _ in evaluated:
        if params in todo:
            todo.remove(params)
    return todo


def _storage_path(executor: dict[str, Any]) -> Path | None:
    """``executor.storage_path``, absolute (every node must mount it at that path)."""
    storage = executor.get("storage_path")
    return Path(storage).expanduser().resolve() if storage else None
