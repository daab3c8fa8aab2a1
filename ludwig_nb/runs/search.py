"""``hyperopt()`` and ``Search``: a Ludwig ``hyperopt:`` search run trial by trial in this kernel.

A driver thread asks Optuna for parameters, trains each trial as an ordinary :class:`Run`
(``train()``'s machinery: its own run directory, dashboard-ready events, GPU watch and
alarms), reports the hyperopt metric of every evaluation to the pruner, and stops a trial
the pruner gives up on (state ``pruned``; a trial that raised is ``failed``).

The search directory (``<results_dir>/<name>``) holds ``search.yaml`` (the config),
``trials.ndjson`` (an append-only journal: one line per trial start, evaluation and end),
``trials/`` (the trials' run directories) and ``hyperopt_statistics.json`` (Ludwig's shape).
Calling ``hyperopt()`` again with the same name resumes: finished trials are read back from
the journal into the study and never rerun; a trial the search was stopped in reruns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ludwig_nb.core import events as ev
from ludwig_nb.core.search_eta import FinishedTrial, RunningTrial, TrialShape, search_remaining_s
from ludwig_nb.runs.search_tune import trial_end_state

if TYPE_CHECKING:
    import pandas as pd

    from ludwig_nb.runs.run import Run

__all__ = ["JOURNAL_FILE", "STATISTICS_FILE", "Search", "TrialRecord", "hyperopt"]

JOURNAL_FILE = "trials.ndjson"
STATISTICS_FILE = "hyperopt_statistics.json"
SEARCH_CONFIG_FILE = "search.yaml"
STATES = ("queued", "running", "paused", "completed", "pruned", "failed", "stopped")
_FINISHED = ("completed", "pruned", "failed", "stopped")
_POLL_S = 0.05  # how often the driver looks at its trials' new events
#: steps of a trial whose time the search ETA leaves out of its time per step: the first
#: optimizer steps pay one-off costs (torch's compile of the optimizer step, caches)
_WARM_STEPS = 5


@dataclasses.dataclass
class TrialRecord:
    """One trial as the search sees it.

    ``metric``: best value of the hyperopt metric so far; ``curve``: (evaluation number, value)
    pairs; times are wall-clock seconds.
    """

    number: int
    params: dict[str, object]
    state: str = "queued"
    metric: float | None = None
    last: float | None = None
    epoch: int = 0
    curve: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    started: float | None = None
    ended: float | None = None
    run_dir: str | None = None
    run: Run | None = None
    error: str | None = None
    search_stopped: bool = False  # ended because the whole search stopped: reruns on resume
    eval_steps: set[int] = dataclasses.field(default_factory=set, repr=False)
    schedule: ev.ScheduleInfo | None = None  # its plan, from RunStarted
    steps: int = 0  # steps trained
    step_s: float | None = None  # its time per step (s), evaluations and checkpoints aside
    trained_at: float | None = None  # when its plan came (RunStarted): setup ends there
    aside_s: float = 0.0  # seconds of its evaluations and checkpoints so far
    last_event: float | None = None  # wall-clock time of its latest step
    #: (steps, time, seconds aside) once its first steps (one-off warm-up) are behind it
    settled: tuple[int, float, float] | None = None
    gpu: tuple[int, float] | None = None  # (GPU index, share of it) when it trains on a GPU

    @property
    def shape(self) -> TrialShape | None:
        """Its batch size, planned steps and evaluations (None before its plan)."""
        from ludwig_nb.runs.search_cost import shape_of

        return shape_of(self.schedule) if self.schedule is not None else None

    @property
    def duration_s(self) -> float | None:
        """Seconds the trial has run so far (until it ended); None before it started."""
        if self.started is None:
            return None
        return (self.ended if self.ended is not None else time.time()) - self.started


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
        gpu_count: int | None = None,
    ) -> None:
        from ludwig_nb.runs.search_space import SearchSpace

        self.name = name
        self.directory = directory
        self.section = section
        self.space = SearchSpace(section["parameters"])
        self._raw = raw_config
        self._rendered = rendered
        self._dataset = dataset
        self._train_options = train_options
        self._registry = registry_dir
        self._clock = clock
        self._lock = threading.RLock()
        self._trials: dict[int, TrialRecord] = {}
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        executor = section["executor"]
        self.executor = "ray" if executor.get("type") == "ray" else "local"
        self.goal = section["goal"]
        self.metric_path = (_split(section["split"]), section["output_feature"], section["metric"])
        share = float(executor.get("gpu_resources_per_trial") or 0)
        #: the GPUs the local executor's trials share (None: trials train where they would)
        self.packer = _packer(share, gpu_count) if self.executor == "local" and share > 0 else None
        self._trial_memory_limit: float | None = None  # the ray executor's per-trial cap
        auto = executor["max_concurrent_trials"] == "auto"
        self.concurrency = (
            int(executor["max_concurrent_trials"])
            if not auto
            else (self.packer.capacity if self.packer is not None else 1)
        )
        self.total = int(executor["num_samples"])
        if self._is_grid:  # as Ray Tune: the grid, num_samples times
            self.total = self.space.grid_size * int(executor["num_samples"])
        self.time_budget_s = executor.get("time_budget_s")
        self.started: float | None = None
        self.ended: float | None = None
        self._draws: Any = None  # QueuedDraws, made on the first ETA that needs one
        self._slots: int | None = None  # trials at once as the executor found (Ray: its CPUs)
        self._restore_journal()

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
    def runs(self) -> list[Run]:
        """The trials' runs (this process's; trials restored from the journal have none)."""
        with self._lock:
            return [t.run for t in self._trials.values() if t.run is not None]

    def records(self) -> list[TrialRecord]:
        """Every trial, by number (copies of the list; the records are live)."""
        with self._lock:
            return [self._trials[k] for k in sorted(self._trials)]

    @property
    def trials(self) -> pd.DataFrame:
        """One row per trial.

        Trial, state, one column per parameter (its config path), metric (best value of the hyperopt
        metric), epoch, duration_s, run_dir.
        """
        import pandas as pd

        rows = []
        for trial in self.records():
            row: dict[str, object] = {"trial": trial.number, "state": self._state_of(trial)}
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

        The cost model of ``core.search_eta``: finished trials' durations, step times and
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
            if t.state in _FINISHED and t.duration_s is not None and not t.search_stopped
        ]
        running = []
        for t in records:
            if t.state in ("running", "paused") and t.started is not None:
                estimate = t.run.eta(now) if t.run is not None else None
                remaining = getattr(estimate, "remaining_s", None)
                running.append(RunningTrial(now - t.started, remaining, t.shape, t.step_s))
        counted = sum(1 for t in records if t.state in _FINISHED and not t.search_stopped)
        queued = max(0, self.total - counted - len(running))
        shapes = self._queued_shapes(records) if queued else []
        return search_remaining_s(finished, running, queued, self.slots, shapes)

    @property
    def slots(self) -> int:
        """Trials that run at once (for the ETA): the limit, or what the executor found."""
        return self._slots or self.concurrency

    def _queued_shapes(self, records: list[TrialRecord]) -> list[TrialShape]:
        from ludwig_nb.runs.search_cost import QueuedDraws, rows_from_schedules

        schedules = [t.schedule for t in records if t.schedule is not None]
        rows = rows_from_schedules(schedules)
        if rows is None:
            return []
        if self._draws is None:
            try:
                self._draws = QueuedDraws.from_space(self.space, self._raw, self._rendered)
            except Exception:  # a space the planner cannot draw from: the mean stands in
                self._draws = QueuedDraws([])
        shapes: list[TrialShape] = self._draws.shapes(
            rows, [s.batch_size for s in schedules if s.batch_size]
        )
        return shapes

    def counts(self) -> dict[str, int]:
        """The number of trials in each state of :data:`STATES`."""
        out = dict.fromkeys(STATES, 0)
        for trial in self.records():
            out[self._state_of(trial)] += 1
        return out

    def __repr__(self) -> str:
        counts = self.counts()
        done = sum(counts[s] for s in _FINISHED)
        return f"<Search {self.name!r} {done} of {self.total} trials dir={str(self.directory)!r}>"

    # -- the driver ----------------------------------------------------------------------
    @property
    def _is_grid(self) -> bool:
        kind = self.section["search_alg"].get("type")
        return kind in ("random", "variant_generator") and self.space.all_grid

    def _state_of(self, trial: TrialRecord) -> str:
        if trial.state == "running" and trial.run is not None and trial.run.status == "paused":
            return "paused"
        return trial.state

    def _active(self) -> list[TrialRecord]:
        with self._lock:
            return [t for t in self._trials.values() if t.state == "running"]

    def _drive(self) -> None:
        try:
            self.started = self._clock()
            if self.executor == "ray":
                from ludwig_nb.runs.search_tune import run_on_tune

                run_on_tune(self)
            else:
                self._loop()
        except BaseException as exc:
            self.error = exc
            self._journal({"event": "search_failed", "message": str(exc) or type(exc).__name__})
        finally:
            self.ended = self._clock()
            with contextlib.suppress(OSError):
                self._write_statistics()
            self._done.set()

    def _loop(self) -> None:
        import optuna

        from ludwig_nb.runs.search_space import make_pruner, make_sampler

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        search_alg = self.section["search_alg"]
        seed = search_alg.get("random_state_seed", search_alg.get("seed"))
        epochs = int((self._raw.get("trainer") or {}).get("epochs") or 100)
        study = optuna.create_study(
            direction=self.goal,
            sampler=make_sampler(search_alg, self.space, seed),
            pruner=make_pruner(self.section["executor"]["scheduler"], epochs),
        )
        self._seed_study(study)
        live: dict[int, object] = {}  # trial number -> its Optuna trial, while it trains
        while True:
            self._reap(study, live)
            if self._stop.is_set() and not live:
                break
            counted = sum(
                1 for t in self.records() if t.state in _FINISHED and not t.search_stopped
            )
            over_budget = (
                self.time_budget_s is not None
                and self.started is not None
                and self._clock() - self.started >= float(self.time_budget_s)
            )
            can_start = (
                not self._stop.is_set()
                and not self._paused.is_set()
                and not over_budget
                and len(live) < self.concurrency
                and counted + len(live) < self.total
                and (self.packer is None or self.packer.has_room())
            )
            if over_budget and live and not self._stop.is_set():
                self._journal({"event": "time_budget_spent", "time_budget_s": self.time_budget_s})
                self.stop("time_budget")  # as Ray Tune: the budget ends running trials too
            if can_start:
                self._launch(study, live)
                continue
            if not live and (counted >= self.total or over_budget):
                break
            time.sleep(_POLL_S)

    def _seed_study(self, study: Any) -> None:
        """Finished trials from the journal go into the study; the rest rerun first."""
        import optuna

        for point in self.section["search_alg"].get("points_to_evaluate") or []:
            if not any(t.params == point for t in self._trials.values()):
                study.enqueue_trial(self.space.encode(point), skip_if_exists=True)
        for trial in self.records():
            internal = self.space.encode(trial.params)
            if trial.state in _FINISHED and not trial.search_stopped:
                state = {
                    "completed": optuna.trial.TrialState.COMPLETE,
                    "pruned": optuna.trial.TrialState.PRUNED,
                }.get(trial.state, optuna.trial.TrialState.FAIL)
                study.add_trial(
                    optuna.trial.create_trial(
                        params=internal,
                        distributions=self.space.distributions,
                        value=trial.metric if state == optuna.trial.TrialState.COMPLETE else None,
                        intermediate_values=dict(trial.curve),
                        state=state,
                    )
                )
            else:  # started but never finished (kernel died or search stopped): rerun it
                study.enqueue_trial(internal)
                with self._lock:
                    del self._trials[trial.number]

    def _launch(self, study: Any, live: dict[int, object]) -> None:
        otrial = study.ask(self.space.distributions)
        record = self._new_record(self.space.decode(otrial.params))
        options = dict(self._train_options)
        if options.get("threads") is None and self.concurrency > 1:  # share the cores
            options["threads"] = max(1, ((os.cpu_count() or 2) - 1) // self.concurrency)
        if self.packer is not None:
            from ludwig_nb.runs import search_gpus

            index = self.packer.place()
            assert index is not None  # the loop starts a trial only when one fits
            record.gpu = (index, self.packer.share)
            options["device"] = search_gpus.device_name(index)
        run = self._train_trial(record, "builtin", options, otrial)
        if run is None:
            self._finish(study, otrial, record, "failed")
            return
        live[record.number] = otrial

    def _new_record(self, params: dict[str, object]) -> TrialRecord:
        """The next trial, queued, in the table and the journal."""
        with self._lock:
            number = max([*self._trials, -1]) + 1
            record = TrialRecord(
                number=number, params=params, state="queued", started=self._clock()
            )
            self._trials[number] = record
        self._journal({"event": "trial_started", "trial": number, "params": params})
        return record

    def _trial_config(self, record: TrialRecord) -> dict[str, object]:
        """The trial's config: its parameters applied (and its GPU share's memory cap)."""
        from ludwig_nb.config.hyperopt import apply_parameters
        from ludwig_nb.runs.search_gpus import trial_memory_limit

        config = apply_parameters(self._raw, record.params, self._rendered)
        limit = self._trial_memory_limit
        if record.gpu is not None and self.packer is not None:  # the GPU's packed shares
            limit = trial_memory_limit(self.packer.load(record.gpu[0]))
        watch = dict(config.get("gpu_watch") or {})
        if limit is not None and watch.get("gpu_memory_limit") is None:  # the user's stands
            config["gpu_watch"] = {**watch, "gpu_memory_limit": limit}
        return config

    def _train_trial(
        self, record: TrialRecord, engine: Any, options: dict[str, Any], otrial: object = None
    ) -> Run | None:
        """Start the trial's run; ``engine`` is a name or an engine.

        Returns None when its config is refused (``record.error`` says why: the caller
        ends it as failed).
        """
        from ludwig_nb.runs.api import train

        try:
            run = train(
                self._trial_config(record),
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
        # the pruner decides on the training thread, at each evaluation, before the next step
        run.add_listener(lambda event: self._on_event(otrial, record, event))
        for event in run.events:  # what came before the listener was attached
            self._on_event(otrial, record, event)
        return run

    def _reap(self, study: object, live: dict[int, object]) -> None:
        for number in list(live):
            otrial = live[number]
            record = self._trials[number]
            run = record.run
            assert run is not None
            if run.is_done:
                state = record.state if record.state == "pruned" else trial_end_state(run)
                if state == "failed":
                    record.error = str(run.error) if run.error else run.status
                self._finish(study, otrial, record, state)
                del live[number]

    def _on_event(self, otrial: Any, record: TrialRecord, event: ev.Event) -> None:
        """One event of a trial.

        Its plan and steps (for the search ETA), and at each evaluation its curve, its best, the
        journal and the pruner.

        Runs on the trial's training thread (and once on the driver's for earlier events).
        """
        if isinstance(event, ev.StepFinished):
            record.steps = max(record.steps, event.step + 1)
            record.last_event = event.time
            if record.trained_at is None:
                return
            if record.settled is None and record.steps >= _WARM_STEPS:
                record.settled = (record.steps, event.time, record.aside_s)
            # training time per step, evaluations and checkpoints aside; past the first
            # steps once there are more (their one-off costs count as the trial's overhead)
            done, since, aside = record.settled or (0, record.trained_at, 0.0)
            if record.steps > done:
                spent = event.time - since - (record.aside_s - aside)
                record.step_s = max(1e-9, spent / (record.steps - done)) if spent > 0 else None
            return
        if isinstance(event, ev.RunStarted | ev.ScheduleChanged):
            record.schedule = event.schedule
            if isinstance(event, ev.RunStarted):
                record.trained_at = event.time
            return
        if isinstance(event, ev.CheckpointSaved):
            record.aside_s += max(0.0, event.time - event.start_time)
            return
        if not isinstance(event, ev.EvaluationFinished):
            return
        record.aside_s += max(0.0, event.time - event.start_time)
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
            record.curve.append((step, value))
            record.last = value
            record.epoch = event.epoch + 1
            better = record.metric is None or (
                value < record.metric if self.goal == "minimize" else value > record.metric
            )
            if better:
                record.metric = value
        self._journal(
            {"event": "trial_evaluated", "trial": record.number, "step": step, "value": value}
        )
        if record.state == "running" and otrial is not None:  # Optuna's pruner (local)
            otrial.report(value, step)
            if otrial.should_prune():
                record.state = "pruned"
                assert record.run is not None
                record.run.stop("pruned")

    def _finish(self, study: object, otrial: object, record: TrialRecord, state: str) -> None:
        with self._lock:
            record.state = state
            record.ended = self._clock()
            if record.gpu is not None and self.packer is not None:
                self.packer.release(record.gpu[0])
        if study is not None:
            self._tell(study, otrial, record, state)
        self._journal_end(record, state)

    def _tell(self, study: Any, otrial: object, record: TrialRecord, state: str) -> None:
        import optuna

        if state == "completed" and record.metric is not None:
            outcome: dict[str, object] = {"values": record.metric}
        elif state == "pruned":
            outcome = {"state": optuna.trial.TrialState.PRUNED}
        else:
            outcome = {"state": optuna.trial.TrialState.FAIL}
        try:
            study.tell(otrial, **outcome)
        except RuntimeError as exc:
            # GridSampler calls study.stop() once the grid is done, which Optuna allows only
            # inside study.optimize; tell() has stored the trial by then (its `finally`)
            if "Study.stop" not in str(exc):
                raise

    def _journal_end(self, record: TrialRecord, state: str) -> None:
        self._journal(
            {
                "event": "trial_finished",
                "trial": record.number,
                "state": state,
                "metric": record.metric,
                "epoch": record.epoch,
                "duration_s": record.duration_s,
                "run_dir": record.run_dir,
                "error": record.error,
                "search_stopped": record.search_stopped,
                "steps": record.steps,
                "step_s": record.step_s,
                "schedule": record.schedule.to_dict() if record.schedule is not None else None,
                "gpu": list(record.gpu) if record.gpu is not None else None,
            }
        )
        with contextlib.suppress(OSError):
            self._write_statistics()

    # -- the search directory --------------------------------------------------------------
    def _journal(self, entry: dict[str, object]) -> None:
        entry = {"time": self._clock(), **entry}
        with self._lock, (self.directory / JOURNAL_FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, allow_nan=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _restore_journal(self) -> None:
        path = self.directory / JOURNAL_FILE
        if not path.exists():
            return
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a crash
                continue
            number = entry.get("trial")
            kind = entry.get("event")
            if kind == "trial_started":
                self._trials[number] = TrialRecord(
                    number=number, params=entry["params"], state="running", started=entry["time"]
                )
            elif number in self._trials:
                record = self._trials[number]
                if kind == "trial_evaluated":
                    record.curve.append((entry["step"], entry["value"]))
                    record.last = entry["value"]
                elif kind == "trial_finished":
                    record.state = entry["state"]
                    record.metric = entry.get("metric")
                    record.epoch = entry.get("epoch") or 0
                    record.ended = entry["time"]
                    record.run_dir = entry.get("run_dir")
                    record.error = entry.get("error")
                    record.search_stopped = bool(entry.get("search_stopped"))
                    record.steps = int(entry.get("steps") or 0)
                    record.step_s = entry.get("step_s")
                    schedule = entry.get("schedule")
                    record.schedule = ev.ScheduleInfo.from_dict(schedule) if schedule else None
                    gpu = entry.get("gpu")
                    record.gpu = (int(gpu[0]), float(gpu[1])) if gpu else None

    def _write_statistics(self) -> None:
        """``hyperopt_statistics.json`` as Ludwig writes it.

        The section and the completed trials, best first, each with parameters, metric_score,
        training_stats, eval_stats.
        """
        results = []
        for trial in self.records():
            if trial.state != "completed" or trial.metric is None:
                continue
            training_stats, eval_stats = _run_statistics(trial.run_dir)
            results.append(
                {
                    "parameters": trial.params,
                    "metric_score": trial.metric,
                    "training_stats": training_stats,
                    "eval_stats": eval_stats,
                }
            )
        results.sort(key=lambda r: float(r["metric_score"]), reverse=self.goal == "maximize")  # type: ignore[arg-type]
        section = {k: v for k, v in self.section.items() if not k.startswith("_")}
        stats = {"hyperopt_config": section, "hyperopt_results": results}
        tmp = self.directory / (STATISTICS_FILE + ".tmp")
        tmp.write_text(json.dumps(stats, indent=2, allow_nan=False, default=str), encoding="utf-8")
        tmp.replace(self.directory / STATISTICS_FILE)


def _packer(share: float, gpu_count: int | None) -> Any:
    """The GPUs trials asking for ``share`` of one are packed onto.

    Raises ``ConfigError`` (at ``gpu_resources_per_trial``) when this machine shows no GPU.
    """
    from ludwig_nb.config import ConfigError
    from ludwig_nb.runs.search_gpus import GpuPacker, visible_gpus

    count, reason = (gpu_count, "") if gpu_count is not None else visible_gpus()
    if count < 1:
        raise ConfigError(
            f"gpu_resources_per_trial is {share:g}, but this machine shows no GPU"
            + (f" ({reason})" if reason else ""),
            path="hyperopt.executor.gpu_resources_per_trial",
            hint="set it to 0 to train the trials on the CPU",
        )
    return GpuPacker(count, min(1.0, share))


def _split(name: str) -> str:
    return "training" if name == "train" else name


def _run_statistics(run_dir: str | None) -> tuple[dict[str, object], dict[str, object]]:
    """Read a trial's results from its ``events.ndjson`` in Ludwig's shapes.

    Ludwig's training_statistics (split -> feature -> metric -> per-evaluation list) and the test
    split of the last evaluation, from a trial's events.ndjson.
    """
    training: dict[str, Any] = {}
    last: dict[str, object] = {}
    if run_dir is None:
        return training, last
    path = Path(run_dir) / "events.ndjson"
    if not path.exists():
        return training, last
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("type") != "evaluation_finished":
            continue
        for split, features in (entry.get("metrics") or {}).items():
            for feature, metrics in features.items():
                for metric, value in metrics.items():
                    training.setdefault(split, {}).setdefault(feature, {}).setdefault(
                        metric, []
                    ).append(value)
        last = (entry.get("metrics") or {}).get("test", {})
    return training, last


def hyperopt(
    config: object,
    dataset: object,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    wait: bool = False,
    *,
    device: str | None = None,
    random_seed: int | None = None,
    threads: int | None = None,
    registry_dir: Path | None = None,
) -> Search:
    """Validate a config with a ``hyperopt:`` section and search it in a daemon thread.

    ``config``: YAML text or a dict (Ludwig 0.11's shape). ``dataset``: as for ``train``.
    The search lives in ``<results_dir>/<name>`` (``name`` defaults to "search"); calling
    again with the same name resumes it. ``wait=True`` returns when it ends. Raises
    ``ConfigError`` (located) for a bad config or a missing ``hyperopt`` section,
    ``DataError`` for a bad dataset, ``ValueError`` when the directory holds a different
    search.
    """
    from ludwig_nb.config import ConfigError
    from ludwig_nb.config.yaml_positions import parse_yaml
    from ludwig_nb.data import check_dataset

    raw = _raw(config, parse_yaml)
    rendered = _validated(config)
    if rendered.get("hyperopt") is None:
        raise ConfigError(
            "the config has no hyperopt section to search",
            path="hyperopt",
            hint="add hyperopt: {parameters: {trainer.learning_rate: {space: loguniform, "
            "lower: 0.0001, upper: 0.1}}}, or train it with ludwig_nb.train()",
        )
    _check_executor_available(rendered["hyperopt"])
    check_dataset(rendered, dataset)
    name = name or "search"
    directory = Path(results_dir).resolve() / name
    directory.mkdir(parents=True, exist_ok=True)
    saved = directory / SEARCH_CONFIG_FILE
    text = yaml.safe_dump(raw, sort_keys=True)
    if saved.exists() and saved.read_text(encoding="utf-8") != text:
        raise ValueError(
            f"{str(directory)!r} holds a different search (its {SEARCH_CONFIG_FILE} differs); "
            "pass another name, or delete that folder to start over"
        )
    saved.write_text(text, encoding="utf-8")
    search = Search(
        name=name,
        directory=directory,
        raw_config=raw,
        section=rendered["hyperopt"],
        dataset=dataset,
        rendered=rendered,
        train_options={"device": device, "random_seed": random_seed, "threads": threads},
        registry_dir=registry_dir,
    )
    search.start()
    if wait:
        search.wait()
    return search


def _check_executor_available(section: dict[str, Any]) -> None:
    """Refuse ``executor: {type: ray}`` without Ray Tune here.

    It needs Ray Tune (and optuna for ``search_alg: optuna``); raises
    ``EngineUnavailable`` saying what to install.
    """
    if section["executor"].get("type") != "ray":
        return
    from ludwig_nb.engines.base import EngineUnavailable
    from ludwig_nb.runs.search_tune import tune_module

    tune = tune_module()
    missing = tune.tune_missing() or (
        tune.optuna_missing() if section["search_alg"].get("type") == "optuna" else None
    )
    if missing is not None:
        raise EngineUnavailable(missing)


def _raw(config: object, parse: Callable[[str], Any]) -> dict[str, object]:
    from ludwig_nb.config import Config, ConfigError

    if isinstance(config, Config):
        data = config.to_dict()
    elif isinstance(config, str):
        data = parse(config).data
    elif isinstance(config, dict):
        data = config
    else:
        raise ConfigError(f"a config is YAML text, a dict or a Config, not {type(config).__name__}")
    if not isinstance(data, dict):
        raise ConfigError("a config is a mapping (input_features, output_features, ...)")
    copied: dict[str, object] = json.loads(json.dumps(data, default=str))
    return copied


def _validated(config: Any) -> dict[str, Any]:
    """Load and check the search's config.

    The rendered config, with every problem located, checked against the built-in engine that trains
    the trials; the "hyperopt is a search, not a training run" refusal that ``train()`` makes is the
    one problem dropped.
    """
    from ludwig_nb.config import ConfigError, load_config
    from ludwig_nb.config.hyperopt import load_search_config
    from ludwig_nb.engines.registry import get_engine

    cfg = load_config(config)
    rendered = load_search_config(cfg)
    try:
        get_engine("builtin").check(cfg)
    except ConfigError as err:
        rest = [p for p in err.errors if p.path != "hyperopt"]
        if rest:
            raise ConfigError.collect(rest) from None
    return rendered
