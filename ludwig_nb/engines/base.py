"""The ``Engine`` protocol: the contract a training backend owns.

An engine says what it can run (:meth:`Engine.check`, on the caller's thread, raising the
located ``UnsupportedByEngine``), how it plans a run (:meth:`Engine.plan`, for pre-flight, the
ETA's schedule and the search's cost model), what it needs of the data before its thread
starts (:meth:`Engine.prepare_data`), how it trains (:meth:`Engine.fit`) and how its saved
models load (:meth:`Engine.load`, chosen by the manifest in the model folder, see
manifest.py). With defaults, so that an engine declares only what it has: whether its GPUs are
on other machines (:attr:`Engine.gpus_on_workers`), a check of a checkpoint before the thread
starts (:meth:`Engine.check_resume`), how it warms up in the background and in a kernel
(:meth:`Engine.start_warm_up`, :meth:`Engine.use_in_kernel`, :attr:`Engine.check_modules`),
what its framework knows of its devices (:meth:`Engine.devices`), what a step of a config
needs of a GPU's memory (:meth:`Engine.estimate_memory`, for pre-flight) and what schedules a
search's trials on it (:meth:`Engine.search_backend`). The layers above ask the engine all
this and never import one: engines subclass :class:`Engine` to inherit the defaults.

``fit`` gets a validated, fully rendered config and the dataset, calls ``emit`` for every
event (core/events.py), and checks ``control`` at every step boundary
(``control.checkpoint()`` raises ``StopRequested``; ``control.wait_while_paused(...)``
blocks while paused). It never touches a widget and never prints.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ludwig_nb.core.control import Control
from ludwig_nb.core.events import Event, ScheduleInfo
from ludwig_nb.engines.devices import NO_DEVICE_FACTS, DeviceFacts

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.core.gpu_sample import Snapshot
    from ludwig_nb.core.memory_estimate import MemoryEstimate
    from ludwig_nb.engines.search_backend import TuneHooks, TuneSpec

__all__ = [
    "DEFAULT_SEED",
    "Emit",
    "Engine",
    "EngineUnavailable",
    "PreparedDataset",
    "SearchBackend",
    "TrainJob",
    "TrainedModel",
    "config_seed",
    "job_seed",
]

Emit = Callable[[Event], None]


class EngineUnavailable(RuntimeError):
    """The engine cannot run in this environment (e.g. Ludwig is not installed).

    The message says what to install.
    """


@dataclasses.dataclass
class TrainJob:
    """Everything one training run needs.

    ``config``: the fully rendered Ludwig config (``Config.to_dict()``).
    ``dataset``: what the engine's ``prepare_data`` returned (a DataFrame, a path, or
    ``{"training": ..., "validation": ..., "test": ...}``).
    ``run_dir``: where checkpoints/ and model/ go. ``resume_from``: a run directory whose
    ``checkpoints/`` to continue from. ``device``: "cpu", "cuda", "cuda:1" or None (auto).
    ``clock``: wall-clock seconds (``time.time``), injectable for tests. ``seed``: the
    random seed (Ludwig's ``random_seed``; None: 42). ``threads``: CPU threads for the
    engine's torch math (None: the engine's default, leaving a core for the kernel).
    """

    config: dict[str, Any]
    dataset: Any
    run_dir: Path
    run_id: str
    name: str
    device: str | None = None
    resume_from: Path | None = None
    clock: Callable[[], float] | None = None
    seed: int | None = None
    threads: int | None = None
    profile_steps: int = 0  # > 0: torch.profiler records this many steps
    #: where an engine whose devices are on other machines (``gpus_on_workers``: Ray) sends
    #: the GPU snapshots its workers' nodes read; None: nobody watches them
    gpu_feed: Callable[[Snapshot], None] | None = None


#: Ludwig's default ``random_seed``
DEFAULT_SEED = 42


@runtime_checkable
class PreparedDataset(Protocol):
    """What ``prepare_data`` may return in place of the table: a dataset read elsewhere.

    Read and checked by another process (the built-in engine's prefetch), so the run layer
    does not hold it: it gives the run layer the table's shape and the trivial baseline
    (computed on the splits of ``seed``); everything else is its engine's.
    """

    source: Any  # the dataset as the user gave it (a path or a demo name)
    rows: int
    columns: int
    seed: int  # the seed its splits were cut with
    fingerprint: str  # the table's content fingerprint (data/fingerprint.py); "" if none

    def baseline(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``trivial_baseline``'s (metrics, predictors) on its splits; None without one."""
        ...


def job_seed(job: TrainJob) -> int:
    """The run's random seed.

    ``job.seed`` if the run layer sets one, else the config's ``random_seed`` (top level) or
    ``trainer.seed``, else :data:`DEFAULT_SEED` (Ludwig's). The engine trains and splits with it;
    the run layer's baseline splits with it too.
    """
    return int(job.seed) if job.seed is not None else config_seed(job.config)


def config_seed(config: Mapping[str, Any]) -> int:
    """The seed ``config`` asks for.

    ``random_seed`` (top level) or ``trainer.seed``, else :data:`DEFAULT_SEED` (a job's own
    ``seed`` comes first, :func:`job_seed`).
    """
    for value in (config.get("random_seed"), (config.get("trainer") or {}).get("seed")):
        if value is not None:
            return int(value)
    return DEFAULT_SEED


class TrainedModel(Protocol):
    """A trained model: predict, evaluate and save, in any process once loaded."""

    def predict(self, data: Any) -> Any:  # -> pandas.DataFrame
        """Predictions for ``data`` (a DataFrame or a file path), one row per input row."""

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]:
        """Metrics on labelled ``data``: ``{feature: {metric: value}}``."""

    def save(self, path: str | Path) -> Path:
        """Save the model under ``path`` and return its folder.

        The folder loads with :func:`ludwig_nb.load_model` in any process.
        """


class Engine(Protocol):
    """A training backend; see the module docstring for the contract."""

    name: str
    #: its runs' GPUs are on other machines: their workers read them and feed the snapshots
    #: back through ``TrainJob.gpu_feed`` (Ray); False: the run layer's sampler reads them here
    gpus_on_workers: ClassVar[bool] = False
    #: it cuts one table into splits as ``data.split_dataset`` does with the run's seed (as the
    #: trivial baseline does), so ``Run.splits`` can name their rows; False: it cuts its own
    shares_splits: ClassVar[bool] = True
    #: modules its check imports (a first cell's, before its dashboard) and modules its data
    #: preparation imports, in order: a kernel imports them ahead (ipython/warmup.py)
    check_modules: ClassVar[tuple[str, ...]] = ()
    data_modules: ClassVar[tuple[str, ...]] = ()

    def check(self, config: Config) -> None:
        """Reject what this engine cannot run of a valid ``config``.

        Raise ``UnsupportedByEngine`` (located at the config's lines) for whatever part of the valid
        ``config`` this engine cannot run, and ``EngineUnavailable`` when the engine cannot run here
        at all. Cheap: no heavy import, on the caller's thread.
        """
        ...

    def prepare_data(self, config: Mapping[str, Any], dataset: Any) -> Any:
        """Check ``dataset`` against ``config`` and return what ``fit`` gets.

        Runs before the thread starts (``DataError`` for a missing file or column); the result
        becomes ``TrainJob.dataset``. Whatever can wait for the thread should.
        """
        ...

    def plan(self, config: Mapping[str, Any], rows: int) -> ScheduleInfo:
        """The schedule a run of ``config`` over ``rows`` training rows follows.

        The plan pre-flight costs, without early stopping.
        """
        ...

    def warm_up(self) -> None:
        """Pay one-off costs (imports) so that a following pilot measures the run."""
        ...

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> TrainedModel | None:
        """Train; return the final model.

        ``StopRequested`` is handled inside (a stopped run still returns its model, or None when it
        stopped before a model existed); any other exception propagates to the run layer.
        """
        ...

    def load(self, folder: Path, manifest: Mapping[str, Any]) -> TrainedModel:
        """Load a model this engine saved in ``folder`` (``manifest``: its manifest file)."""
        ...

    def check_resume(self, run_dir: Path, config: Mapping[str, Any]) -> None:
        """Before the thread starts: the run's checkpoint in ``run_dir`` loads and fits ``config``.

        Raises ``FileNotFoundError`` or ``CheckpointError`` naming the file. The default checks
        nothing (the engine finds out in ``fit``).
        """
        del run_dir, config

    def start_warm_up(self) -> threading.Thread | None:
        """Start :meth:`warm_up` in a background thread, once per process; returns that thread.

        What the CLI starts while it reads the config and the data, and a kernel after its
        first cell's modules. None (the default): nothing is worth warming ahead.
        """
        return None

    def use_in_kernel(self) -> None:
        """This process is a Jupyter kernel that loaded the extension (it stays, and warms up).

        The built-in engine then reads its runs' data in this process. The default: nothing.
        """
        return

    def devices(self) -> DeviceFacts:
        """What its framework knows of the devices it trains on (engines/devices.py).

        The default: nothing (no allocator bytes, no versions, no peak memory).
        """
        return NO_DEVICE_FACTS

    def estimate_memory(self, config: Mapping[str, Any], dataset: Any) -> MemoryEstimate | None:
        """The GPU memory a training step of ``config`` on ``dataset`` needs, before any runs.

        ``ludwig_nb.estimate`` attaches it to its prediction. None (the default): this engine
        makes no such estimate for ``config``.
        """
        del config, dataset
        return None

    def search_backend(self) -> SearchBackend | None:
        """What schedules a search's trials on this engine (``executor: {type: <name>}``).

        None (the default): a search runs on it through the local executor only.
        """
        return None


class SearchBackend(Protocol):
    """An engine's scheduler of a search's trials (Ray Tune for the ``ray`` engine)."""

    def missing(self, search_alg: str) -> str | None:
        """Why it cannot run ``search_alg`` (its type) here, naming the extra; None when it can.

        Cheap: no import of the scheduler's framework.
        """
        ...

    def check(self, config: Config) -> Engine:
        """Reject what its trials cannot train of a valid ``config`` (``UnsupportedByEngine``).

        ``config`` is a trial's: without the ``hyperopt`` section. Returns the engine whose
        loop the trials train (its plan is theirs: the search's cost model plans with it).
        """
        ...

    def trial_engine(self, channel: str, tune_id: str, storage: Path | None) -> Engine:
        """The engine of a trial's run in the notebook, which mirrors the trial.

        Args:
            channel: the experiment's channel (the ``channel`` of ``TuneHooks.start_trial``).
            tune_id: the trial's id in the experiment.
            storage: the experiment's ``storage_path`` (None: the run directories).
        """
        ...

    def decode(
        self, parameters: dict[str, dict[str, Any]], values: dict[str, Any]
    ) -> dict[str, Any]:
        """The scheduler's sampled ``values`` -> the values written into the trial's config."""
        ...

    def trial_folder(self, storage: Path | None, run_dir: Path, run_id: str) -> Path:
        """Where a trial writes its run folder: on ``storage``, else its run directory."""
        ...

    def run(self, spec: TuneSpec, hooks: TuneHooks) -> None:
        """Run the experiment until its trials are done or the search stops (blocks).

        Raises:
            RuntimeError: the scheduler failed to run the experiment (a trial's failure ends
                that trial as failed, and the experiment goes on).
        """
        ...
