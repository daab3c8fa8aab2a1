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
from ludwig_nb.core.search_eta import RunningTrial, search_remaining_s

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


@dataclasses.dataclass
class TrialRecord:
    """One trial as the search sees it.

    ``metric``: best value of the hyperopt metric so far; ``curve``: (evaluation number, value)
    pairs; times are wall-clock seconds.
    """

    number: int
    params: dict[str, Any]
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
        dataset: Any,
        rendered: dict[str, Any] | None = None,
        train_options: dict[str, Any],
        registry_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
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
        self.goal = section["goal"]
        self.metric_path = (_split(section["split"]), section["output_feature"], section["metric"])
        self.concurrency = (
            1
            if executor["max_concurrent_trials"] == "auto"
            else int(executor["max_concurrent_trials"])
        )
        self.total = int(executor["num_samples"])
        if self._is_grid:  # as Ray Tune: the grid, num_samples times
            self.total = self.space.grid_size * int(executor["num_samples"])
        self.time_budget_s = executor.get("time_budget_s")
        self.started: float | None = None
        self.ended: float | None = None
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
            row: dict[str, Any] = {"trial": trial.number, "state": self._state_of(trial)}
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
        """Seconds until the search is done (see ``core.search_eta``); None before a basis."""
        now = self._clock() if now is None else now
        records = self.records()
        finished = [
            t.duration_s
            for t in records
            if t.state in _FINISHED and t.duration_s is not None and not t.search_stopped
        ]
        running = []
        for t in records:
            if t.state in ("running", "paused") and t.started is not None:
                estimate = t.run.eta(now) if t.run is not None else None
                remaining = getattr(estimate, "remaining_s", None)
                running.append(RunningTrial(now - t.started, remaining))
        counted = sum(1 for t in records if t.state in _FINISHED and not t.search_stopped)
        queued = max(0, self.total - counted - len(running))
        if self.is_done:
            return 0.0
        return search_remaining_s(finished, running, queued, self.concurrency)

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
        live: dict[int, Any] = {}  # trial number -> its Optuna trial, while it trains
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

    def _launch(self, study: Any, live: dict[int, Any]) -> None:
        from ludwig_nb.config.hyperopt import apply_parameters
        from ludwig_nb.runs.api import train

        otrial = study.ask(self.space.distributions)
        number = max([*self._trials, -1]) + 1
        params = self.space.decode(otrial.params)
        record = TrialRecord(number=number, params=params, state="queued", started=self._clock())
        with self._lock:
            self._trials[number] = record
        self._journal({"event": "trial_started", "trial": number, "params": params})
        config = apply_parameters(self._raw, params, self._rendered)
        options = dict(self._train_options)
        if options.get("threads") is None and self.concurrency > 1:  # share the cores
            options["threads"] = max(1, ((os.cpu_count() or 2) - 1) // self.concurrency)
        try:
            run = train(
                config,
                self._dataset,
                name=f"{self.name}-trial{number}",
                results_dir=self.directory / "trials",
                registry_dir=self._registry,
                engine="builtin",
                **options,
            )
        except Exception as exc:  # a sampled config the engine refuses: the trial failed
            record.error = str(exc)
            self._finish(study, otrial, record, "failed")
            return
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
        live[number] = otrial

    def _reap(self, study: Any, live: dict[int, Any]) -> None:
        for number in list(live):
            otrial = live[number]
            record = self._trials[number]
            run = record.run
            assert run is not None
            if run.is_done:
                state = record.state if record.state == "pruned" else _final_state(run)
                if state == "failed":
                    record.error = str(run.error) if run.error else run.status
                self._finish(study, otrial, record, state)
                del live[number]

    def _on_event(self, otrial: Any, record: TrialRecord, event: ev.Event) -> None:
        """One evaluation of a trial: its curve, its best, the journal, the pruner.

        Runs on the trial's training thread (and once on the driver's for earlier events).
        """
        if not isinstance(event, ev.EvaluationFinished):
            return
        split, feature, metric = self.metric_path
        value = (event.metrics.get(split) or {}).get(feature, {}).get(metric)
        if value is None or not math.isfinite(float(value)):
            return
        value = float(value)
        with self._lock:
            if record.state != "running" or event.step in record.eval_steps:
                return  # after a prune, or seen already (replayed)
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
        if record.state == "running":
            otrial.report(value, step)
            if otrial.should_prune():
                record.state = "pruned"
                assert record.run is not None
                record.run.stop("pruned")

    def _finish(self, study: Any, otrial: Any, record: TrialRecord, state: str) -> None:
        import optuna

        with self._lock:
            record.state = state
            record.ended = self._clock()
        if state == "completed" and record.metric is not None:
            outcome: dict[str, Any] = {"values": record.metric}
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
            }
        )
        with contextlib.suppress(OSError):
            self._write_statistics()

    # -- the search directory --------------------------------------------------------------
    def _journal(self, entry: dict[str, Any]) -> None:
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


def _split(name: str) -> str:
    return "training" if name == "train" else name


def _final_state(run: Run) -> str:
    status = run.status
    if status == "completed":
        return "completed"
    if status == "failed":
        return "failed"
    return "stopped"


def _run_statistics(run_dir: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read a trial's results from its ``events.ndjson`` in Ludwig's shapes.

    Ludwig's training_statistics (split -> feature -> metric -> per-evaluation list) and the test
    split of the last evaluation, from a trial's events.ndjson.
    """
    training: dict[str, Any] = {}
    last: dict[str, Any] = {}
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
    config: Any,
    dataset: Any,
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


def _raw(config: Any, parse: Callable[[str], Any]) -> dict[str, Any]:
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
    copied: dict[str, Any] = json.loads(json.dumps(data, default=str))
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
