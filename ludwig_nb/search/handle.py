"""``Search``: the handle of a hyperparameter search, and the trials it keeps.

A driver thread runs the search's executor (:mod:`ludwig_nb.search.executor`: Optuna in this
kernel, or Ray Tune), which asks for trials through the small public API below
(:meth:`Search.new_trial`, :meth:`Search.train_trial`, :meth:`Search.prune`,
:meth:`Search.finish_trial`, ...). Each trial trains as an ordinary :class:`Run` (``train()``'s
machinery: its own run directory, dashboard-ready events, GPU watch and alarms) on the config's
engine; the search follows its events for the hyperopt metric (the pruner decides at each
evaluation) and for the search ETA's cost model.

The search directory (``<results_dir>/<name>``) holds ``search.yaml`` (the config),
``trials.ndjson`` (the journal, journal.py), ``trials/`` (the trials' run directories) and
``hyperopt_statistics.json`` (Ludwig's shape, statistics.py). A search made again over the
same directory resumes: finished trials are read back from the journal and never rerun; a
trial the search was stopped in reruns.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import events as ev
from ludwig_nb.search.eta import FinishedTrial, RunningTrial, TrialShape, search_remaining_s
from ludwig_nb.search.executor import Executor, OnEvaluation
from ludwig_nb.search.journal import Journal, finished_entry
from ludwig_nb.search.statistics import write_statistics
from ludwig_nb.search.trial import FINISHED, STATES, TrialRecord, note_timing

if TYPE_CHECKING:
    import pandas as pd

    from ludwig_nb.engines.base import Engine
    from ludwig_nb.runs.run import Run
    from ludwig_nb.search.executor import Executor

__all__ = ["Search"]


class Search:
    """A hyperparameter search; create it with :func:`ludwig_nb.hyperopt`.

    Args:
        name: The search's name.
        directory: The search directory; the trials are run directories under it.
        raw_config: The config as written, each trial's starting point.
        section: The rendered ``hyperopt`` section.
        dataset: What every trial trains on.
        rendered: The rendered config, when already checked.
        train_options: Options passed to every trial's ``train()``.
        registry_dir: Where the trials register; None for the default.
        clock: Wall-clock seconds.
        engine: The engine the trials train on (a name, as ``train()`` takes; "auto": the
            config's).
        executor: What schedules and runs the trials (``api.make_executor``).
        planner: The engine whose plan the trials follow (``Executor.check``): the search
            ETA costs queued trials by its plan; None: by the finished trials' mean.
    """

    def __init__(
        self,
        *,
        name: str,
        directory: Path,
        raw_config: dict[str, Any],
        section: dict[str, Any],
        dataset: object,
        rendered: dict[str, object] | None = None,
        train_options: dict[str, object],
        registry_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        engine: str = "auto",
        executor: Executor,
        planner: Engine | None = None,
    ) -> None:
        from ludwig_nb.search.space import SearchSpace

        self.name = name
        self.directory = directory
        self.section = section
        self.space = SearchSpace(section["parameters"])
        self.engine = engine
        self._raw = raw_config
        self._rendered = rendered
        self._dataset = dataset
        self._train_options = train_options
        self._registry = registry_dir
        self._clock = clock
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.goal = section["goal"]
        self.metric_path = (_split(section["split"]), section["output_feature"], section["metric"])
        #: how the trials are scheduled and run (``executor.type``: local or ray)
        self.executor = executor
        self._planner = planner
        limit = section["executor"]["max_concurrent_trials"]
        self.concurrency = self.executor.auto_concurrency if limit == "auto" else int(limit)
        self.total = int(section["executor"]["num_samples"])
        if self.is_grid:  # as Ray Tune: the grid, num_samples times
            self.total = self.space.grid_size * int(section["executor"]["num_samples"])
        self.time_budget_s = section["executor"].get("time_budget_s")
        self.started: float | None = None
        self.ended: float | None = None
        self._draws: Any = None  # QueuedDraws, made on the first ETA that needs one
        self._slots: int | None = None  # trials at once as the executor found (Ray: its CPUs)
        self._journal = Journal(directory, clock, self._lock)
        self._trials: dict[int, TrialRecord] = self._journal.restore()

    # -- public handle -------------------------------------------------------------------
    def start(self) -> Search:
        """Start the search in a daemon thread and return it."""
        self._thread = threading.Thread(
            target=self._drive, name=f"ludwig_nb-search-{self.name}", daemon=True
        )
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> Search:
        """Block until the search ends (or ``timeout`` seconds); returns the search.

        A kernel interrupt (Ctrl-C) while waiting stops the search gracefully and waits for
        its running trials to stop; a second one raises ``KeyboardInterrupt``.
        """
        try:
            self._done.wait(timeout)
        except KeyboardInterrupt:
            self.stop("interrupt")
            self._done.wait()
        return self

    def stop(self, reason: str = "user") -> None:
        """Stop the search: no new trials; running ones stop gracefully (they rerun on resume)."""
        self._stop.set()
        self._paused.clear()
        for trial in self._active():
            if trial.run is not None:
                trial.search_stopped = True
                trial.run.stop(reason)

    def pause(self, reason: str = "user") -> None:
        """Pause every running trial and start no new one until :meth:`resume`."""
        self._paused.set()
        for trial in self._active():
            if trial.run is not None:
                trial.run.pause(reason)

    def resume(self) -> None:
        """Resume the search and every paused trial."""
        self._paused.clear()
        for trial in self._active():
            if trial.run is not None:
                trial.run.resume()

    def stop_trial(self, number: int) -> None:
        """Stop one trial (state ``stopped``; it is not rerun)."""
        run = self._trials[number].run
        if run is not None:
            run.stop("user")

    @property
    def is_done(self) -> bool:
        """Whether the search has ended."""
        return self._done.is_set()

    @property
    def is_paused(self) -> bool:
        """Whether the search is paused."""
        return self._paused.is_set()

    @property
    def is_stopping(self) -> bool:
        """Whether the search was asked to stop (by :meth:`stop` or its time budget)."""
        return self._stop.is_set()

    @property
    def runs(self) -> list[Run]:
        """The trials' runs (this process's; trials restored from the journal have none)."""
        with self._lock:
            return [t.run for t in self._trials.values() if t.run is not None]

    def records(self) -> list[TrialRecord]:
        """Every trial, by number (copies of the list; the records are live)."""
        with self._lock:
            return [self._trials[k] for k in sorted(self._trials)]

    def state_of(self, trial: TrialRecord) -> str:
        """The trial's state, ``paused`` while its run is paused (one of :data:`STATES`)."""
        if trial.state == "running" and trial.run is not None and trial.run.status == "paused":
            return "paused"
        return trial.state

    @property
    def trials(self) -> pd.DataFrame:
        """One row per trial.

        Trial, state, one column per parameter (its config path), metric (best value of the hyperopt
        metric), epoch, duration_s, run_dir.
        """
        import pandas as pd

        rows = []
        for trial in self.records():
            row: dict[str, object] = {"trial": trial.number, "state": self.state_of(trial)}
            for name in self.section["parameters"]:
                row[name] = trial.params.get(name)
            row["metric"] = trial.metric
            row["epoch"] = trial.epoch
            row["duration_s"] = trial.duration_s
            row["run_dir"] = trial.run_dir
            rows.append(row)
        columns = ["trial", "state", *self.section["parameters"], "metric", "epoch"]
        return pd.DataFrame(rows, columns=[*columns, "duration_s", "run_dir"])

    @property
    def best(self) -> pd.Series | None:
        """The best completed trial's row of :attr:`trials` (None before one completes)."""
        frame = self.trials
        done = frame[(frame["state"] == "completed") & frame["metric"].notna()]
        if done.empty:
            return None
        metric = done["metric"].astype(float)
        index = metric.idxmin() if self.goal == "minimize" else metric.idxmax()
        row: pd.Series = done.loc[index]  # type: ignore[call-overload]
        return row

    def remaining_s(self, now: float | None = None) -> float | None:
        """Seconds until the search is done, or None before there is a basis.

        The cost model of ``search.eta``: finished trials' durations, step times and
        shapes; running trials' own ETAs; queued trials costed over draws of the space.

        Args:
            now: wall-clock seconds (default: the search's clock).
        """
        now = self._clock() if now is None else now
        if self.is_done:
            return 0.0
        records = self.records()
        finished = [
            FinishedTrial(t.duration_s, t.shape, t.steps or None, t.step_s)
            for t in records
            if t.counts and t.duration_s is not None
        ]
        running = []
        for t in records:
            if t.state in ("running", "paused") and t.started is not None:
                estimate = t.run.eta(now) if t.run is not None else None
                remaining = getattr(estimate, "remaining_s", None)
                running.append(RunningTrial(now - t.started, remaining, t.shape, t.step_s))
        queued = max(0, self.total - self.counted - len(running))
        shapes = self._queued_shapes(records) if queued else []
        return search_remaining_s(finished, running, queued, self.slots, shapes)

    @property
    def slots(self) -> int:
        """Trials that run at once (for the ETA): the limit, or what the executor found."""
        return self._slots or self.concurrency

    def counts(self) -> dict[str, int]:
        """The number of trials in each state of :data:`STATES`."""
        out = dict.fromkeys(STATES, 0)
        for trial in self.records():
            out[self.state_of(trial)] += 1
        return out

    def __repr__(self) -> str:
        counts = self.counts()
        done = sum(counts[s] for s in FINISHED)
        return f"<Search {self.name!r} {done} of {self.total} trials dir={str(self.directory)!r}>"

    # -- what the executors ask of the search ---------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The config as written (each trial's starting point; not to be changed)."""
        return self._raw

    @property
    def rendered(self) -> dict[str, Any] | None:
        """The rendered config, when the search was made from a checked one."""
        return self._rendered

    @property
    def dataset(self) -> object:
        """What every trial trains on, as the user gave it."""
        return self._dataset

    @property
    def train_options(self) -> dict[str, object]:
        """A copy of the options every trial's ``train()`` gets (device, seed, threads)."""
        return dict(self._train_options)

    @property
    def seed(self) -> int | None:
        """The search algorithm's seed (``random_state_seed``, else ``seed``; None: none)."""
        search_alg = self.section["search_alg"]
        seed: int | None = search_alg.get("random_state_seed", search_alg.get("seed"))
        return seed

    @property
    def max_epochs(self) -> int:
        """Epochs of a full trial (the trainer's ``epochs``; 100 when the config sets none)."""
        return int((self._raw.get("trainer") or {}).get("epochs") or 100)

    @property
    def is_grid(self) -> bool:
        """Whether the search walks a grid (random search over ``grid_search`` spaces only)."""
        kind = self.section["search_alg"].get("type")
        return kind in ("random", "variant_generator") and self.space.all_grid

    @property
    def counted(self) -> int:
        """Trials that ended for good (the search's stop reruns the others)."""
        return sum(1 for t in self.records() if t.counts)

    def over_budget(self) -> bool:
        """Whether ``time_budget_s`` is spent (never without one or before the start)."""
        return (
            self.time_budget_s is not None
            and self.started is not None
            and self._clock() - self.started >= float(self.time_budget_s)
        )

    def spend_budget(self) -> None:
        """The time budget is spent: note it in the journal and stop (running trials too)."""
        self._journal.append({"event": "time_budget_spent", "time_budget_s": self.time_budget_s})
        self.stop("time_budget")

    def set_slots(self, slots: int) -> None:
        """How many trials the executor found room for at once (for the search ETA)."""
        self._slots = slots

    def take_unfinished(self) -> list[TrialRecord]:
        """Remove the trials that did not end for good from the table; they rerun first.

        A trial of the journal that was running when the kernel died or the search stopped.
        """
        with self._lock:
            unfinished = [t for t in self.records() if not t.counts]
            for trial in unfinished:
                del self._trials[trial.number]
        return unfinished

    def new_trial(self, params: dict[str, object]) -> TrialRecord:
        """The next trial, queued, in the table and the journal."""
        with self._lock:
            number = max([*self._trials, -1]) + 1
            record = TrialRecord(
                number=number, params=params, state="queued", started=self._clock()
            )
            self._trials[number] = record
        self._journal.append({"event": "trial_started", "trial": number, "params": params})
        return record

    def train_trial(
        self,
        record: TrialRecord,
        engine: str | Engine,
        options: dict[str, Any],
        *,
        memory_limit: float | None = None,
        on_evaluation: OnEvaluation | None = None,
    ) -> Run | None:
        """Start the trial's run; ``engine`` is a name or an engine.

        Args:
            record: the trial (from :meth:`new_trial`).
            engine: what trains it (a name, as ``train()`` takes, or an engine).
            options: its ``train()`` options (device, random_seed, threads).
            memory_limit: its ``gpu_watch.gpu_memory_limit`` when the config sets none.
            on_evaluation: called on the trial's training thread at each evaluation while the
                trial runs, before its next step (the pruner's turn).

        Returns:
            The run, or None when its config is refused (``record.error`` says why: the caller
            ends it as failed).
        """
        from ludwig_nb.runs.api import train

        try:
            run = train(
                self._trial_config(record, memory_limit),
                self._dataset,
                name=f"{self.name}-trial{record.number}",
                results_dir=self.directory / "trials",
                registry_dir=self._registry,
                engine=engine,
                **options,
            )
        except Exception as exc:  # a sampled config the engine refuses: the trial failed
            record.error = str(exc)
            return None
        with self._lock:
            record.run = run
            record.run_dir = str(run.directory)
            record.state = "running"
        if self._stop.is_set():  # stop() came while train() was validating this trial
            record.search_stopped = True
            run.stop("user")
        elif self._paused.is_set():
            run.pause("user")
        run.add_listener(lambda event: self._on_event(record, event, on_evaluation))
        for event in run.events:  # what came before the listener was attached
            self._on_event(record, event, on_evaluation)
        return run

    def prune(self, record: TrialRecord) -> None:
        """The pruner (or scheduler) gave up on a running trial: state ``pruned``, run stopped."""
        if record.state != "running":
            return
        record.state = "pruned"
        if record.run is not None:
            record.run.stop("pruned")

    def finish_trial(self, record: TrialRecord, state: str) -> None:
        """The trial ended in ``state``: its end time, the journal, Ludwig's statistics."""
        with self._lock:
            record.state = state
            record.ended = self._clock()
        self._journal.append(finished_entry(record, state))
        with contextlib.suppress(OSError):
            self._write_statistics()

    def journal(self, entry: dict[str, object]) -> None:
        """Append one line to the search's journal (``time`` is added). Raises ``OSError``."""
        self._journal.append(entry)

    # -- the driver ----------------------------------------------------------------------
    def _active(self) -> list[TrialRecord]:
        with self._lock:
            return [t for t in self._trials.values() if t.state == "running"]

    def _drive(self) -> None:
        try:
            self.started = self._clock()
            self.executor.run(self)
        except BaseException as exc:
            self.error = exc
            self._journal.append(
                {"event": "search_failed", "message": str(exc) or type(exc).__name__}
            )
        finally:
            self.ended = self._clock()
            with contextlib.suppress(OSError):
                self._write_statistics()
            self._done.set()

    def _queued_shapes(self, records: list[TrialRecord]) -> list[TrialShape]:
        from ludwig_nb.search.cost import QueuedDraws, rows_from_schedules

        schedules = [t.schedule for t in records if t.schedule is not None]
        rows = rows_from_schedules(schedules)
        if rows is None or self._planner is None:
            return []
        if self._draws is None:
            try:
                self._draws = QueuedDraws.from_space(self.space, self._raw, self._rendered)
            except Exception:  # a space the planner cannot draw from: the mean stands in
                self._draws = QueuedDraws([])
        shapes: list[TrialShape] = self._draws.shapes(
            rows, [s.batch_size for s in schedules if s.batch_size], self._planner.plan
        )
        return shapes

    def _trial_config(self, record: TrialRecord, memory_limit: float | None) -> dict[str, object]:
        """The trial's config: its parameters applied (and its GPU share's memory cap)."""
        from ludwig_nb.config.hyperopt import apply_parameters

        config = apply_parameters(self._raw, record.params, self._rendered)
        watch = dict(config.get("gpu_watch") or {})
        if memory_limit is not None and watch.get("gpu_memory_limit") is None:  # the user's stands
            config["gpu_watch"] = {**watch, "gpu_memory_limit": memory_limit}
        return config

    def _on_event(
        self, record: TrialRecord, event: ev.Event, on_evaluation: OnEvaluation | None
    ) -> None:
        """One event of a trial: its timing, and at each evaluation its curve and best.

        Runs on the trial's training thread (and once on the driver's for earlier events).
        """
        note_timing(record, event)
        if not isinstance(event, ev.EvaluationFinished):
            return
        split, feature, metric = self.metric_path
        value = (event.metrics.get(split) or {}).get(feature, {}).get(metric)
        if value is None or not math.isfinite(float(value)):
            return
        value = float(value)
        with self._lock:
            if record.state not in ("running", "pruned") or event.step in record.eval_steps:
                return  # after the end, or seen already (replayed); a Tune scheduler prunes
                # on the report that goes with the evaluation its run may not have yet
            record.eval_steps.add(event.step)
            step = len(record.curve) + 1
            self._note_value(record, step, value, event.epoch)
        self._journal.append(
            {"event": "trial_evaluated", "trial": record.number, "step": step, "value": value}
        )
        if record.state == "running" and on_evaluation is not None:
            on_evaluation(record, step, value)

    def _note_value(self, record: TrialRecord, step: int, value: float, epoch: int) -> None:
        record.curve.append((step, value))
        record.last = value
        record.epoch = epoch + 1
        better = record.metric is None or (
            value < record.metric if self.goal == "minimize" else value > record.metric
        )
        if better:
            record.metric = value

    def _write_statistics(self) -> None:
        write_statistics(self.directory, self.section, self.goal, self.records())


def _split(name: str) -> str:
    return "training" if name == "train" else name
