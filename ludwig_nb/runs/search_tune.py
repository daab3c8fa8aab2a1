"""The run layer's side of ``executor: {type: ray}``.

A :class:`~ludwig_nb.runs.search.Search` driven by one Ray Tune experiment
(``engines/ray/tune/``).

Each Tune trial becomes a trial of the search exactly as on the local executor: a record in
the table and the journal, and an ordinary :class:`Run` (its run directory, events, ETA,
GPU watch) whose engine mirrors the Tune trial. The journal's finished trials are never
rerun: the experiment runs the trials still to do, the unfinished ones first with their
parameters, and a learning search algorithm is told the finished ones.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ludwig_nb.runs.search_gpus import trial_memory_limit

if TYPE_CHECKING:
    from ludwig_nb.runs.run import Run
    from ludwig_nb.runs.search import Search, TrialRecord

__all__ = ["run_on_tune", "trial_end_state", "tune_module"]

_FINISHED = ("completed", "pruned", "failed", "stopped")


def trial_end_state(run: Run) -> str:
    """A finished trial's state from its run: "completed", "failed", else "stopped"."""
    status = run.status
    if status in ("completed", "failed"):
        return status
    return "stopped"


def tune_module() -> ModuleType:
    """``ludwig_nb.engines.ray.tune``, found by name as the engine registry finds Ray's.

    Only the Ray engine's modules import Ray (the import-linter contract).
    """
    return importlib.import_module("ludwig_nb.engines.ray.tune")


class _Hooks:
    """``TuneHooks`` over a search (see engines/ray/tune/spec.py); called on the driver thread."""

    def __init__(
        self, search: Search, cpus: float, gpus: float, storage: Path | None = None
    ) -> None:
        self.search, self.cpus, self.gpus, self.storage = search, cpus, gpus, storage
        self.live: dict[str, TrialRecord] = {}  # Tune trial id -> its record, while it runs
        self.errors: dict[str, str] = {}
        self.cut: set[str] = set()  # trials the scheduler's max_t ended before their plan

    def start_trial(self, tune_id: str, params: dict[str, Any], channel: str) -> dict[str, Any]:
        tune = tune_module()
        search = self.search
        record = search._new_record(tune.decode(search.section["parameters"], params))
        seed = search._train_options.get("random_seed")
        options = {"random_seed": seed, "threads": None, "device": None}
        engine = tune.TuneTrialEngine(channel, tune_id, storage=self.storage)
        run = search._train_trial(record, engine, options)
        if run is None:
            search._finish(None, None, record, "failed")
            return {"refused": record.error or "the trial's config was refused"}
        self.live[tune_id] = record
        control = run.control  # paused or stopped already when the search is
        folder = tune.trial_folder(self.storage, run.directory, run.id)
        return {
            "run_dir": str(run.directory),
            "folder": str(folder),
            "run_id": run.id,
            "name": run.name,
            "config": run.config,
            "seed": seed,
            "threads": max(1, int(self.cpus)),
            "device": "cuda" if self.gpus > 0 else "cpu",
            "control": (
                control.stop_reason if control.stop_requested else None,
                "user" if control.paused else None,
            ),
        }

    def trial_pruned(self, tune_id: str) -> None:
        record = self.live.get(tune_id)
        if record is not None and record.state == "running":
            record.state = "pruned"
            if record.run is not None:
                record.run.stop("pruned")

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
            search._finish(None, None, record, state)
            del self.live[tune_id]
        if self._over_budget() and not search._stop.is_set():
            search._journal({"event": "time_budget_spent", "time_budget_s": search.time_budget_s})
            search.stop("time_budget")  # as on the local executor: running trials stop too

    def _over_budget(self) -> bool:
        search = self.search
        return (
            search.time_budget_s is not None
            and search.started is not None
            and search._clock() - search.started >= float(search.time_budget_s)
        )

    def may_start(self) -> bool:
        search = self.search
        return not (search._stop.is_set() or search._paused.is_set() or self._over_budget())

    def should_end(self) -> bool:
        return self.search._stop.is_set() and not self.live

    def set_slots(self, slots: int) -> None:
        self.search._slots = slots


def _todo(search: Search) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], Any, str]]]:
    """The points to run first and the finished trials.

    Points: unfinished trials, then ``points_to_evaluate`` not run yet; the unfinished
    records leave the table (they rerun).
    """
    points, evaluated = [], []
    for record in search.records():
        if record.state in _FINISHED and not record.search_stopped:
            evaluated.append((record.params, record.metric, record.state))
        else:
            points.append(record.params)
            with search._lock:
                del search._trials[record.number]
    ran = [p for p, _, _ in evaluated] + points
    for point in search.section["search_alg"].get("points_to_evaluate") or []:
        if point not in ran:
            points.append(point)
    return points, evaluated


def _grid(search: Search, evaluated: list[Any]) -> list[dict[str, Any]] | None:
    """A pure grid's points still to run (the grid, ``num_samples`` times, less the done)."""
    if not search._is_grid:
        return None
    from ludwig_nb.runs.search_space import grid_points

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


def run_on_tune(search: Search) -> None:
    """Run ``search``'s remaining trials as one Tune experiment (blocks until it ends).

    Raises:
        RuntimeError: Ray or Tune could not run the experiment.
    """
    from ludwig_nb.data import check_dataset

    tune = tune_module()

    executor = search.section["executor"]
    cpus = float(executor.get("cpu_resources_per_trial") or 1)
    gpus = float(executor.get("gpu_resources_per_trial") or 0)
    points, evaluated = _todo(search)
    counted = len(evaluated)
    concurrent = executor.get("max_concurrent_trials")
    trainer = search._raw.get("trainer") or {}
    search_alg = search.section["search_alg"]
    spec = tune.TuneSpec(
        name=search.name,
        directory=search.directory,
        parameters=search.section["parameters"],
        search_alg=search_alg,
        scheduler=executor["scheduler"],
        goal=search.goal,
        metric_path=search.metric_path,
        num_samples=max(0, search.total - counted),
        points=points,
        evaluated=evaluated,
        grid=_grid(search, evaluated),
        max_concurrent=None if concurrent == "auto" else int(concurrent),
        cpus=cpus,
        gpus=gpus,
        dataset=check_dataset(search._rendered or {}, search._dataset),
        max_t=int(trainer.get("epochs") or 100),
        seed=search_alg.get("random_state_seed", search_alg.get("seed")),
        storage_path=_storage_path(executor),
    )
    if (spec.grid is not None and not spec.grid) or (spec.grid is None and not spec.num_samples):
        return  # nothing left to run
    search._trial_memory_limit = trial_memory_limit(gpus) if 0 < gpus < 1 else None
    hooks = _Hooks(search, cpus, gpus, spec.storage_path)
    try:
        tune.run_tune(spec, hooks)
    finally:
        deadline = time.monotonic() + 120.0  # the mirror runs end once their trial has
        while hooks.live and time.monotonic() < deadline:
            hooks.tick()
            time.sleep(0.05)
