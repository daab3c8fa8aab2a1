"""``executor: {type: ray}``: a search's trials as Ray Tune trials, each the built-in loop.

:func:`run_tune` runs one Tune experiment on the driver (the search's thread in the kernel):

* each trial is a function trainable whose body is the built-in engine's own training loop
  (``Training``, as on Ray Train workers), in its Tune trial actor (``cpu`` / ``gpu``
  resources per trial, fractions allowed); it reports the hyperopt metric to Tune with
  ``tune.report`` at each evaluation only, never per step;
* its events reach the notebook through one named async actor per search
  (:class:`TuneChannel`, ``num_cpus=0``): the trial pushes batches (steps every 0.2 s,
  anything else at once), the notebook's mirror run of the trial (:class:`TuneTrialEngine`
  behind an ordinary ``Run``) long-polls them and forwards its Stop/Pause back. The actor,
  not Tune's driver callbacks, carries the curves: a callback sees only what
  ``tune.report`` sent, so live per-step curves and ETAs would need a report per step
  (DISTRIBUTED.md: ~2 s a step through Ray Train's report path);
* the scheduler (ASHA, median stopping, asynchronous HyperBand) decides on those reports; a
  wrapper records each STOP before ``max_t`` as a prune (one at ``max_t`` is ASHA ending a
  trial that runs its plan to the end anyway) and stops the trial through the channel, so a
  pruned trial ends gracefully (its checkpoint written, state ``pruned``) instead of being
  killed, and no trial starts while the search is paused or stopping;
* the search's hooks (:class:`TuneHooks`, implemented by the run layer) create each trial's
  run directory and mirror run, and hear every prune and end.

Ray is started lazily (or joined: ``RAY_ADDRESS``, or a ``ray.init`` made before); it is
never shut down here and ``ray stop`` is never called. Tune writes its own state under
``<search dir>/ray``; the trial actors' output goes to ``<trial run dir>/worker.log``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import logging
import math
import socket
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.engines.base import Emit, TrainJob

__all__ = [
    "TUNE_SCHEDULERS",
    "TUNE_SEARCH_ALGS",
    "TuneChannel",
    "TuneHooks",
    "TuneSpec",
    "TuneTrialEngine",
    "TuneTrialFailed",
    "run_tune",
    "tune_missing",
]

log = logging.getLogger(__name__)

NAMESPACE = "ludwig_nb"
#: Ludwig ``search_alg.type`` -> what the ray executor runs
TUNE_SEARCH_ALGS = {"random": "BasicVariantGenerator", "variant_generator":
                    "BasicVariantGenerator", "optuna": "OptunaSearch (TPE)"}  # fmt: skip
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
_POLL_S = 0.25  # seconds one long-poll of the channel waits
_ASSIGN_TIMEOUT_S = 300.0  # seconds a trial waits for the notebook to give it a run directory
_PRIMITIVE = (type(None), bool, int, float, str)


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
        return ("search_alg optuna on executor type ray uses Ray Tune's OptunaSearch, which "
                'needs optuna beside Ray: pip install "ludwig_nb[ray,hyperopt]"')  # fmt: skip
    return None


# -- what the run layer gives and gets -----------------------------------------------------
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


class TuneHooks(Protocol):
    """What the search does at each point of a Tune experiment (called on the driver)."""

    def start_trial(self, tune_id: str, params: dict[str, Any], channel: str) -> dict[str, Any]:
        """Create the trial's run (directory and mirror run) and return its assignment.

        The assignment: ``run_dir``, ``run_id``, ``name``, ``config`` (rendered), ``seed``,
        ``threads``, ``device``, or ``{"refused": message}`` when its config cannot train.
        """
        ...

    def trial_pruned(self, tune_id: str) -> None:
        """The scheduler stopped the trial at its last evaluation."""
        ...

    def trial_ended(self, tune_id: str, error: str | None) -> None:
        """Tune finished the trial (``error``: why it failed, None when it returned)."""
        ...

    def tick(self) -> None:
        """Once per turn of Tune's loop: reap ended trials, watch the time budget."""
        ...

    def may_start(self) -> bool:
        """False while the search is paused or stopping: no new trial starts."""
        ...

    def should_end(self) -> bool:
        """True once the search is stopping and no trial of it runs any more."""
        ...

    def set_slots(self, slots: int) -> None:
        """How many trials run at once on this Ray (for the search ETA)."""
        ...


#: the hooks of the experiments running in this process, by key (see :class:`_HooksRef`)
_HOOKS: dict[str, TuneHooks] = {}


class _HooksRef:
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


# -- the channel ---------------------------------------------------------------------------
@dataclasses.dataclass
class _Trial:
    events: list[Any] = dataclasses.field(default_factory=list)
    base: int = 0
    assignment: dict[str, Any] | None = None
    stop: str | None = None
    pause: str | None = None
    ended: bool = False
    error: str | None = None


class TuneChannel:
    """The search's Ray actor (wrapped with ``ray.remote`` by :func:`run_tune`).

    Per trial (by Tune trial id) its assignment, its events, its stop/pause state and its end.
    """

    def __init__(self) -> None:
        self._trials: dict[str, _Trial] = {}
        self._changed: asyncio.Condition | None = None

    def _trial(self, tune_id: str) -> _Trial:
        return self._trials.setdefault(tune_id, _Trial())

    async def _notify(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            self._changed.notify_all()

    async def _wait(self, ready: Callable[[], bool], timeout: float) -> None:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            if not ready():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait_for(ready), timeout)

    async def assign(self, tune_id: str, assignment: dict[str, Any]) -> None:
        """The notebook's answer to a trial's start (see ``TuneHooks.start_trial``)."""
        self._trial(tune_id).assignment = assignment
        await self._notify()

    async def assignment(self, tune_id: str, timeout: float) -> dict[str, Any] | None:
        """The trial's assignment, waiting up to ``timeout`` s for it."""
        trial = self._trial(tune_id)
        await self._wait(lambda: trial.assignment is not None, timeout)
        return trial.assignment

    async def push(self, tune_id: str, batch: list[Any]) -> None:
        """A trial's events, in order."""
        self._trial(tune_id).events.extend(batch)
        await self._notify()

    async def poll(
        self, tune_id: str, cursor: int, timeout: float
    ) -> tuple[list[Any], int, bool, str | None]:
        """Events after ``cursor``, waiting up to ``timeout`` s for one.

        Returns the events, the new cursor, whether the trial has ended, and its error.
        """
        trial = self._trial(tune_id)
        await self._wait(lambda: trial.base + len(trial.events) > cursor or trial.ended, timeout)
        drop = max(0, min(cursor - trial.base, len(trial.events)))
        if drop:  # the notebook has these: free them
            del trial.events[:drop]
            trial.base += drop
        return list(trial.events), trial.base + len(trial.events), trial.ended, trial.error

    async def set_control(self, tune_id: str, stop: str | None, pause: str | None) -> None:
        """The trial's stop and pause requests (from its mirror run, or a prune)."""
        trial = self._trial(tune_id)
        trial.stop = trial.stop or stop
        trial.pause = pause
        await self._notify()

    async def control(self, tune_id: str) -> tuple[str | None, str | None]:
        """(stop reason, pause reason) of the trial."""
        trial = self._trial(tune_id)
        return trial.stop, trial.pause

    async def end(self, tune_id: str, error: str | None) -> None:
        """The trial is over (from the trial itself, or from Tune on the driver)."""
        trial = self._trial(tune_id)
        trial.ended = True
        trial.error = trial.error or error
        await self._notify()


# -- the notebook's side of a trial --------------------------------------------------------
class TuneTrialEngine:
    """The engine of a trial's mirror run in the notebook.

    ``fit`` feeds the trial's events from the channel into the run and forwards the run's Stop/Pause
    to the trial.
    """

    name = "ray"

    def __init__(self, channel: str, tune_id: str, poll_s: float = _POLL_S) -> None:
        self.channel, self.tune_id, self.poll_s = channel, tune_id, poll_s

    def check(self, config: Any) -> None:
        """The built-in engine's check: a trial trains the built-in loop."""
        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        BuiltinEngine().check(config)

    def prepare_data(self, config: Any, dataset: Any) -> Any:
        """The search checked the dataset once; the trial gets it through Ray."""
        del config
        return dataset

    def plan(self, config: Any, rows: int) -> ev.ScheduleInfo:
        """The built-in engine's plan."""
        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        return BuiltinEngine().plan(config, rows)

    def warm_up(self) -> None:
        """Nothing to warm here: the trial trains in its Tune actor."""

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> Any:
        """Mirror the trial until it ends; returns its model (None when it saved none).

        Raises:
            TuneTrialFailed: the trial raised, or its actor died before it finished.
        """
        import ray

        actor = ray.get_actor(self.channel, namespace=NAMESPACE)
        cursor, finished = 0, False
        sent: tuple[str | None, str | None] = (None, None)
        while True:
            with contextlib.suppress(StopRequested):
                control.checkpoint()  # reads the run's control file (the sidebar)
            wanted = (control.stop_reason if control.stop_requested else None,
                      "user" if control.paused else None)  # fmt: skip
            if wanted != sent:
                actor.set_control.remote(self.tune_id, *wanted)
                sent = wanted
            batch, cursor, ended, error = ray.get(
                actor.poll.remote(self.tune_id, cursor, self.poll_s)
            )
            for event in batch:
                finished = finished or isinstance(event, ev.RunFinished | ev.RunFailed)
                if isinstance(event, ev.RunFailed):
                    raise TuneTrialFailed(f"trial {job.name}: {event.error_type}: {event.message}")
                emit(event)
            if ended and not batch:
                break
        if error and not finished:
            raise TuneTrialFailed(f"trial {job.name} ended in Ray Tune before it finished: {error}")
        return self._model(Path(job.run_dir))

    @staticmethod
    def _model(run_dir: Path) -> Any:
        from ludwig_nb.engines.builtin.model_io import load_model

        folder = run_dir / "model"
        return load_model(folder) if folder.is_dir() else None

    def load(self, folder: Path, manifest: Any) -> Any:
        """Trials save built-in models."""
        from ludwig_nb.engines.builtin.model_io import load_model

        return load_model(folder / str(manifest.get("path") or "."))


# -- the trial's side (in its Tune actor) ----------------------------------------------------
class _TrialClient:
    """A trial's handle on the channel.

    Pushes never wait; the control state is refreshed without waiting at each step and, after each
    ``tune.report``, synchronously (so that a prune decided on that report lands before the next
    step).
    """

    def __init__(self, actor: Any, tune_id: str) -> None:
        self.actor, self.tune_id = actor, tune_id
        self._pending: Any = None
        self._last: tuple[str | None, str | None] = (None, None)

    def push(self, batch: list[Any]) -> None:
        self.actor.push.remote(self.tune_id, batch)

    def refresh(self) -> None:
        import ray

        self._last = ray.get(self.actor.control.remote(self.tune_id), timeout=60)
        self._pending = None

    def control_nowait(self) -> tuple[str | None, str | None]:
        import ray

        if self._pending is None:
            self._pending = self.actor.control.remote(self.tune_id)
        ready, _ = ray.wait([self._pending], timeout=0)
        if ready:
            self._last = ray.get(self._pending)
            self._pending = self.actor.control.remote(self.tune_id)
        return self._last

    def control_wait(self, timeout: float) -> tuple[str | None, str | None]:
        time.sleep(timeout)
        self.refresh()
        return self._last


@contextlib.contextmanager
def _trial_log(path: Path) -> Iterator[None]:
    """The trial's prints and log records go to ``path``, not to any cell."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", buffering=1) as out:
        handler = logging.StreamHandler(out)
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                yield
        finally:
            root.removeHandler(handler)


def metric_value(event: ev.EvaluationFinished, path: tuple[str, str, str]) -> float | None:
    """The hyperopt metric in an evaluation's metrics, or None (absent, not finite)."""
    split, feature, metric = path
    value = (event.metrics.get(split) or {}).get(feature, {}).get(metric)
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def trial_main(params: dict[str, Any], channel: str, dataset: Any, metric_path: Any) -> None:
    """One Tune trial, in its actor.

    Wait for the notebook's assignment, train the built-in loop, report the metric at each
    evaluation. Raises what training raises.
    """
    import ray
    import torch
    from ray import tune

    from ludwig_nb.engines.builtin.trainer import Training
    from ludwig_nb.engines.ray.channel import EventBatcher
    from ludwig_nb.engines.ray.worker_control import WorkerControl

    del params  # the notebook applied them: the assignment holds the trial's config
    tune_id = tune.get_context().get_trial_id()
    actor = ray.get_actor(channel, namespace=NAMESPACE)
    info = ray.get(actor.assignment.remote(tune_id, _ASSIGN_TIMEOUT_S))
    if info is None or "refused" in info:
        reason = (info or {}).get("refused", "the notebook gave the trial no run directory")
        ray.get(actor.end.remote(tune_id, reason))
        return
    client = _TrialClient(actor, tune_id)
    batcher = EventBatcher(client.push)
    evaluations = 0

    def emit(event: ev.Event) -> None:
        nonlocal evaluations
        batcher(event)
        if isinstance(event, ev.EvaluationFinished):
            value = metric_value(event, tuple(metric_path))
            if value is not None:
                evaluations += 1
                tune.report({"metric": value, "evaluation": evaluations})
                client.refresh()

    run_dir = Path(info["run_dir"])
    job = TrainJob(config=info["config"], dataset=dataset, run_dir=run_dir,
                   run_id=info["run_id"], name=info["name"], device=info.get("device"),
                   seed=info.get("seed"), threads=info.get("threads"))  # fmt: skip
    error = None
    try:
        with _trial_log(run_dir / "worker.log"):
            torch.set_num_threads(max(1, int(job.threads or 1)))
            control = WorkerControl(client.control_nowait, client.control_wait)
            Training(job, emit, control, engine="ray").run()
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc} (on {socket.gethostname()})"
        with contextlib.suppress(Exception), open(run_dir / "worker.log", "a") as out:
            out.write("".join(traceback.format_exception(exc)))
        raise
    finally:
        batcher.flush()
        with contextlib.suppress(Exception):
            ray.get(actor.end.remote(tune_id, error), timeout=60)


def _trainable(root: str, channel: str, metric_path: tuple[str, str, str]) -> Callable[..., None]:
    """The function Tune runs, made here so that it pickles by value.

    Its actor finds ludwig_nb through ``root`` (the folder this ludwig_nb is imported from).
    """

    def trainable(params: dict[str, Any], dataset: Any = None) -> None:
        if root not in sys.path:
            sys.path.insert(0, root)
        from ludwig_nb.engines.ray.tune import trial_main

        trial_main(params, channel, dataset, metric_path)

    return trainable


# -- the driver ------------------------------------------------------------------------------
def _indexed(values: list[Any]) -> bool:
    return not all(isinstance(v, _PRIMITIVE) for v in values)


def _domain(spec: dict[str, Any]) -> Any:
    """A Ludwig space as a Tune domain (choices of mappings or lists: over their indices)."""
    from ray import tune

    space = spec["space"]
    if space in ("choice", "grid_search"):
        values = list(spec.get("categories", spec.get("values")) or [])
        return tune.choice(list(range(len(values))) if _indexed(values) else values)
    lo, hi, q = spec.get("lower", 0), spec.get("upper", 1), spec.get("q", 1)
    # a log-uniform draw does not depend on the log's base (Ray 2.60 deprecates passing it)
    makers: dict[str, Callable[[], Any]] = {
        "uniform": lambda: tune.uniform(lo, hi),
        "quniform": lambda: tune.quniform(lo, hi, q),
        "loguniform": lambda: tune.loguniform(lo, hi),
        "qloguniform": lambda: tune.qloguniform(lo, hi, q),
        "randint": lambda: tune.randint(int(lo), int(hi)),
        "qrandint": lambda: tune.qrandint(int(lo), int(hi), int(q)),
        "lograndint": lambda: tune.lograndint(int(lo), int(hi)),
        "qlograndint": lambda: tune.qlograndint(int(lo), int(hi), int(q)),
        "randn": lambda: tune.randn(spec.get("mean", 0.0), spec.get("sd", 1.0)),
        "qrandn": lambda: tune.qrandn(spec.get("mean", 0.0), spec.get("sd", 1.0), q),
    }
    return makers[space]()


def decode(parameters: dict[str, dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """Tune's sampled values -> the values written into the trial's config."""
    out = {}
    for name, value in values.items():
        spec = parameters.get(name)
        if spec is None:
            continue
        if spec["space"] in ("choice", "grid_search"):
            choices = list(spec.get("categories", spec.get("values")) or [])
            out[name] = choices[int(value)] if _indexed(choices) else value
        else:
            out[name] = value.item() if hasattr(value, "item") else value
    return out


def encode(parameters: dict[str, dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """Config values -> Tune's (for points to run first and finished trials)."""
    out = {}
    for name, value in values.items():
        spec = parameters.get(name)
        if spec is None:
            continue
        choices = list(spec.get("categories", spec.get("values")) or [])
        indexed = spec["space"] in ("choice", "grid_search") and _indexed(choices)
        out[name] = choices.index(value) if indexed else value
    return out


def _search_alg(spec: TuneSpec) -> Any:
    kind = spec.search_alg.get("type", "random")
    points = [encode(spec.parameters, p) for p in (spec.grid if spec.grid is not None
                                                  else spec.points)]  # fmt: skip
    if kind == "optuna":
        return _optuna_search(spec, points)
    from ray.tune.search.basic_variant import BasicVariantGenerator

    return BasicVariantGenerator(points_to_evaluate=points or None, random_state=spec.seed,
                                 max_concurrent=spec.max_concurrent or 0)  # fmt: skip


def _optuna_search(spec: TuneSpec, points: list[dict[str, Any]]) -> Any:
    """Tune's OptunaSearch (TPE), told the finished trials once Tune gives it the space."""
    import optuna
    from ray.tune.search import ConcurrencyLimiter
    from ray.tune.search.optuna import OptunaSearch

    startup = int(spec.search_alg.get("n_startup_trials", 3))
    finished = [(encode(spec.parameters, p), v, s) for p, v, s in spec.evaluated]

    class _Told(OptunaSearch):  # type: ignore[misc]
        def set_search_properties(self, metric: Any, mode: Any, config: Any, **more: Any) -> bool:
            ok: bool = super().set_search_properties(metric, mode, config, **more)
            for params, value, state in finished:
                with contextlib.suppress(Exception):  # a point outside today's space
                    self.add_evaluated_point(params, value if value is not None else 0.0,
                                             error=state == "failed",
                                             pruned=state == "pruned")  # fmt: skip
            finished.clear()
            return ok

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    searcher = _Told(points_to_evaluate=points or None,
                     sampler=optuna.samplers.TPESampler(seed=spec.seed,
                                                        n_startup_trials=startup))  # fmt: skip
    if spec.max_concurrent:
        return ConcurrencyLimiter(searcher, max_concurrent=spec.max_concurrent)
    return searcher


def _max_t(spec: TuneSpec) -> int:
    """The schedulers' last rung, in evaluations: ``max_t``, else the trainer's epochs."""
    grace = int(spec.scheduler.get("grace_period") or 1)
    return int(spec.scheduler.get("max_t") or max(spec.max_t, grace))


def _scheduler(spec: TuneSpec) -> Any:
    """Ludwig's ``scheduler`` as a Tune scheduler; time is evaluations (``training_iteration``).

    ``hyperband`` runs as asynchronous HyperBand (3 brackets): Tune's synchronous
    HyperBandScheduler pauses trials between rungs, which a trial that ends gracefully
    cannot be; ASHA stops instead of pausing.
    """
    from ray.tune.schedulers import AsyncHyperBandScheduler, FIFOScheduler, MedianStoppingRule

    config = spec.scheduler
    kind = config.get("type", "fifo")
    grace = int(config.get("grace_period") or 1)
    max_t = _max_t(spec)
    if kind in ("asha", "async_hyperband", "hyperband", "hb_bohb"):
        brackets = int(config.get("brackets") or (1 if kind.startswith("a") else 3))
        return AsyncHyperBandScheduler(time_attr="training_iteration", max_t=max_t,
                                       grace_period=min(grace, max_t),
                                       reduction_factor=float(config.get("reduction_factor")
                                                              or (4 if kind.startswith("a")
                                                                  else 3)),
                                       brackets=brackets)  # fmt: skip
    if kind in ("median_stopping_rule", "median"):
        return MedianStoppingRule(time_attr="training_iteration", grace_period=grace,
                                  min_samples_required=int(config.get("min_samples_required")
                                                           or 3))  # fmt: skip
    return FIFOScheduler()


def _wrapped_scheduler(inner: Any, hooks: TuneHooks, actor: Any, max_t: int) -> Any:
    """``inner`` with every STOP turned into a graceful stop through the channel.

    Each STOP is recorded as a prune; no trial starts while the search is paused or
    stopping.
    """
    from ray.tune.schedulers import TrialScheduler

    class _Graceful(TrialScheduler):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner
            self.pruned: set[str] = set()

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
            if decision == TrialScheduler.STOP and result.get("training_iteration", 0) >= max_t:
                # ASHA stops what reaches max_t: not a prune; the trial ends with its plan
                return str(TrialScheduler.CONTINUE)
            if decision == TrialScheduler.STOP and not result.get("done"):
                if trial.trial_id not in self.pruned:
                    self.pruned.add(trial.trial_id)
                    hooks.trial_pruned(trial.trial_id)
                    ray_get(actor.set_control.remote(trial.trial_id, "pruned", None))
                return str(TrialScheduler.CONTINUE)
            return str(decision)

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


def ray_get(ref: Any, timeout: float = 60.0) -> Any:
    """``ray.get`` with a timeout (an actor call of the driver never hangs the search)."""
    import ray

    return ray.get(ref, timeout=timeout)


def _callbacks(hooks: TuneHooks, actor: Any, channel: str) -> tuple[Any, Any]:
    """The driver's Tune callback (trial starts and ends) and stopper (the search's end)."""
    from ray.tune import Callback
    from ray.tune.stopper import Stopper

    class _Hooks(Callback):  # type: ignore[misc]
        def on_trial_start(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            try:
                assignment = hooks.start_trial(trial.trial_id, dict(trial.config), channel)
            except Exception as exc:  # the trial then ends at once, failed
                assignment = {"refused": f"{type(exc).__name__}: {exc}"}
            ray_get(actor.assign.remote(trial.trial_id, assignment))

        def on_trial_complete(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            ray_get(actor.end.remote(trial.trial_id, None))
            hooks.trial_ended(trial.trial_id, None)

        def on_trial_error(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            error = _trial_error(trial)
            ray_get(actor.end.remote(trial.trial_id, error))
            hooks.trial_ended(trial.trial_id, error)

        def on_step_end(self, iteration: int, trials: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            hooks.tick()

    class _End(Stopper):  # type: ignore[misc]
        def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:  # noqa: ARG002 (Tune's names)
            return False

        def stop_all(self) -> bool:
            return bool(hooks.should_end())

    return _Hooks(), _End()


def _trial_error(trial: Any) -> str:
    """The last line of what Tune recorded for a failed trial."""
    path = getattr(trial, "error_file", None) or ""
    text = ""
    with contextlib.suppress(OSError):
        text = Path(path).read_text(encoding="utf-8") if path else ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "the trial's Ray actor failed"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Tune's and Ray's INFO lines stay out of the cell while the experiment runs."""
    loggers = [logging.getLogger(n) for n in ("ray.tune", "ray.train", "ray.air", "ray")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _slots(spec: TuneSpec) -> int:
    """Trials that fit on this Ray at once (its CPUs and GPUs over the trial's share)."""
    import ray

    total = ray.cluster_resources()
    fits = [int(float(total.get("CPU", 1)) // spec.cpus) if spec.cpus > 0 else spec.num_samples]
    if spec.gpus > 0:
        fits.append(int(float(total.get("GPU", 0)) // spec.gpus))
    slots = max(1, min(fits))
    return min(slots, spec.max_concurrent) if spec.max_concurrent else slots


def run_tune(spec: TuneSpec, hooks: TuneHooks) -> None:
    """Run the experiment until its trials are done or the search stops (blocks).

    Raises:
        RuntimeError: Ray or Tune failed to run the experiment (not a trial's failure:
            those end the trial as failed and the experiment goes on).
    """
    import ray
    from ray import tune

    import ludwig_nb
    from ludwig_nb.engines.ray.driver import ensure_ray, worker_runtime_env

    ensure_ray(None)
    hooks.set_slots(_slots(spec))
    channel = f"tune-{spec.name}-{uuid.uuid4().hex[:8]}"
    _HOOKS[channel] = hooks
    ref: Any = _HooksRef(channel)
    actor = (ray.remote(num_cpus=0)(TuneChannel)
             .options(name=channel, namespace=NAMESPACE, max_concurrency=64,
                      runtime_env=worker_runtime_env())
             .remote())  # fmt: skip
    root = str(Path(ludwig_nb.__file__).resolve().parent.parent)
    resources = {"cpu": spec.cpus, "gpu": spec.gpus}
    trainable = tune.with_resources(
        tune.with_parameters(_trainable(root, channel, spec.metric_path), dataset=spec.dataset),
        resources,
    )
    space = {name: _domain(p) for name, p in spec.parameters.items()}
    callback, stopper = _callbacks(ref, actor, channel)
    num_samples = len(spec.grid) if spec.grid is not None else spec.num_samples
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(
            metric="metric", mode="min" if spec.goal == "minimize" else "max",
            search_alg=_search_alg(spec), num_samples=num_samples,
            scheduler=_wrapped_scheduler(_scheduler(spec), ref, actor, _max_t(spec)),
            max_concurrent_trials=spec.max_concurrent,
        ),
        run_config=tune.RunConfig(
            name=f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}",
            storage_path=str((spec.directory / "ray").resolve()), verbose=0,
            callbacks=[callback], stop=stopper, log_to_file=True,
            failure_config=tune.FailureConfig(max_failures=0),
        ),
    )  # fmt: skip
    try:
        with _quiet():
            tuner.fit()
    finally:
        _HOOKS.pop(channel, None)
        with contextlib.suppress(Exception):
            ray.kill(actor)
