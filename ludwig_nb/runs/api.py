"""``train()`` and ``load_model()``: the public entry points of the run layer.

``train()`` is two steps, which the ``%%ludwig_config`` magic takes apart to show its
dashboard in between (:func:`prepare_run`, then :meth:`PendingRun.start`):

1. the check, on the caller's thread, cheap (milliseconds once the config layer is loaded;
   no pandas, no torch): the config (``ConfigError``, located), the engine, the dataset as
   far as it can be checked without reading it (``data/sources.py``: a known demo, an
   existing file of a known type, the feature columns of a DataFrame or a CSV/TSV header;
   ``DataError``), the checkpoint to resume from; then the run directory and the registry
   entry. Returns a run that has not started.
2. the start: the run's thread reads the dataset and checks its values (the engine's
   ``prepare_data``, emitting ``DataProgress``), then preprocesses and trains.
   :meth:`PendingRun.data_checked` waits for the read and, when it failed, removes the run
   (directory, registry entry) and raises its ``DataError`` on the caller's thread: a data
   mistake still fails the call (or the cell), located, with nothing left behind.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ludwig_nb.core.names import safe_name
from ludwig_nb.engines.base import TrainJob
from ludwig_nb.engines.registry import AUTO, get_engine, select_engine
from ludwig_nb.runs import live
from ludwig_nb.runs.ludwig_files import write_description
from ludwig_nb.runs.run import Run
from ludwig_nb.store import registry, rundir
from ludwig_nb.store.directories import explain, make_run_directory, undo

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.base import Engine, TrainedModel

__all__ = [
    "PendingRun",
    "default_registry_dir",
    "load_model",
    "make_run_id",
    "prepare_run",
    "train",
]

#: libyaml's safe dumper when PyYAML has it (the same text as ``yaml.safe_dump``, ~5x faster
#: on a rendered config), else the pure-Python one
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def default_registry_dir() -> Path:
    """``<jupyter runtime dir>/ludwig_nb/runs`` (honours ``JUPYTER_RUNTIME_DIR``)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return registry.registry_dir(Path(jupyter_runtime_dir()))


def make_run_id(name: str, now: float) -> str:
    """``<name>-<yyyymmdd-hhmmss>-<4 hex>``; the name is reduced to safe characters."""
    slug = safe_name(name)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{slug}-{stamp}-{secrets.token_hex(2)}"


def _load(config: Any) -> Config:
    from ludwig_nb.config import Config, load_config

    if isinstance(config, Config):
        return config
    return load_config(config)


def _origin() -> dict[str, str | None]:
    """Which kernel and notebook this process is, when it is a Jupyter kernel."""
    kernel = None
    if "ipykernel" in sys.modules:
        try:
            from ipykernel import get_connection_file

            kernel = Path(get_connection_file()).stem.removeprefix("kernel-")
        except Exception:  # not inside a running kernel app
            kernel = None
    return {"kernel": kernel, "notebook": os.environ.get("JPY_SESSION_NAME")}


def train(
    config: Any,
    dataset: Any,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    wait: bool = False,
    resume_from: str | os.PathLike[str] | None = None,
    device: str | None = None,
    engine: str | Engine = AUTO,
    *,
    random_seed: int | None = None,
    threads: int | None = None,
    profile_steps: int = 0,
    clock: Callable[[], float] = time.time,
    registry_dir: Path | None = None,
) -> Run:
    """Validate, then train in a daemon thread; returns the :class:`Run` once its data is read.

    ``config``: YAML text, a dict or a ``Config``. ``dataset``: a DataFrame, a path (CSV, TSV,
    Parquet, JSON, JSONL), ``"demo:NAME"`` or ``{"training": ..., "validation": ..., "test": ...}``.
    With ``resume_from`` (a run directory), a config, a dataset or a name left None is the resumed
    run's own (``runs/resume.py``). ``wait=True`` returns after the run ends. ``random_seed``
    (default 42, as in Ludwig) makes runs reproducible; ``threads`` sets the CPU threads torch uses
    (default: all cores but one). ``engine``: "builtin", "ludwig" (real Ludwig, the ``[ludwig]``
    extra) or "auto": the built-in engine when it can run the config, else Ludwig when installed (an
    engine object is also taken, after its check: a search's trials on Ray Tune).
    ``profile_steps=N`` records N training steps (after 4 warm-up steps) with torch.profiler:
    ``torch_trace.json`` (Chrome/Perfetto) and the top operators (``run.top_ops``) in the run
    directory.
    Raises ``ConfigError`` (``UnsupportedByEngine`` for a valid config the engine cannot
    run), ``EngineUnavailable`` / ``CheckpointError`` / ``RunDirectoryError`` (an ``OSError``
    naming the path) before any thread starts, ``DataError`` once the run's thread has read
    the dataset (the call waits for that read, not for preprocessing or torch) and, before
    that read, ``BaseModelUnavailable`` (an ``EngineUnavailable``) for an LLM whose
    ``base_model`` cannot be had here, ``ValueError``
    for a negative ``profile_steps``, and leaves no run directory behind when it raises.
    """
    pending = prepare_run(
        config,
        dataset,
        name,
        results_dir,
        resume_from,
        device,
        engine,
        random_seed=random_seed,
        threads=threads,
        profile_steps=profile_steps,
        clock=clock,
        registry_dir=registry_dir,
    )
    run = pending.start()
    pending.data_checked()
    if wait:
        run.wait()
    return run


class PendingRun:
    """A checked run whose thread has not started: :func:`prepare_run`'s result.

    Args:
        run: The run (not started).
        created: The folder ``make_run_directory`` created (removed when the run is discarded).
        registry_dir: The registry folder holding its entry.
    """

    def __init__(self, run: Run, created: Path | None, registry_dir: Path) -> None:
        self.run = run
        self._created = created
        self._registry = registry_dir

    def start(self) -> Run:
        """Start the run's thread (it reads the data first); returns the run."""
        return self.run.start()

    def data_checked(self, timeout: float | None = None) -> bool:
        """Wait until the run's thread has read and checked the dataset.

        Args:
            timeout: Seconds to wait at most (None: as long as the read takes).

        Returns:
            True once the data is checked, False when ``timeout`` passed first.

        Raises:
            DataError: The dataset failed (missing column, bad values, unreadable file...);
                the run is then removed as if never started (its directory, its registry
                entry, this kernel's run list). Any other error of the read is raised too.
        """
        error = self.run.wait_for_data(timeout)
        if error is None:
            return self.run.data_ready
        self.discard()
        raise error

    def discard(self) -> None:
        """Remove the run: it never trains (call once its thread has ended, or before start)."""
        if self.run.started:
            self.run.wait()
        self.run._abandon()
        live.remove_run(self.run)
        registry.unregister_run(self._registry, self.run.id)  # a missing entry is ignored
        undo(self._created)


def prepare_run(
    config: Any,
    dataset: Any,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    resume_from: str | os.PathLike[str] | None = None,
    device: str | None = None,
    engine: str | Engine = AUTO,
    *,
    random_seed: int | None = None,
    threads: int | None = None,
    profile_steps: int = 0,
    clock: Callable[[], float] = time.time,
    registry_dir: Path | None = None,
) -> PendingRun:
    """The check step of :func:`train`: everything but reading the data; nothing starts.

    Takes :func:`train`'s arguments (but ``wait``). Cheap: no pandas and no torch are needed.
    Raises what :func:`train` raises before its thread starts, and ``DataError`` for what
    ``data.sources.check_source`` finds without reading the rows.
    """
    from ludwig_nb.data.sources import check_source

    if not isinstance(profile_steps, int) or profile_steps < 0:
        raise ValueError(f"profile_steps must be a whole number >= 0, got {profile_steps!r}")
    if resume_from is not None:
        config, dataset, name = _resumed_inputs(resume_from, config, dataset, name)
    cfg = _load(config)
    engine_impl = select_engine(engine, cfg) if isinstance(engine, str) else _checked(engine, cfg)
    rendered = cfg.to_dict()
    check_source(rendered, dataset)
    resume_dir = _check_resume(resume_from, engine_impl, rendered)

    now = clock()
    name = name or "run"
    run_id = make_run_id(name, now)
    directory, created = make_run_directory(Path(results_dir).resolve(), run_id)
    registry_path = Path(registry_dir) if registry_dir is not None else default_registry_dir()
    try:
        (directory / rundir.CONFIG_FILE).write_text(
            yaml.dump(rendered, Dumper=_YAML_DUMPER, sort_keys=False), encoding="utf-8"
        )
        # as Ludwig writes it at the start: a run that never ends still names its dataset
        write_description(directory, rendered, _recorded(dataset), random_seed)
        job = TrainJob(
            config=rendered,
            dataset=dataset,  # read on the run's thread (read_data below)
            run_dir=directory,
            run_id=run_id,
            name=name,
            device=device,
            resume_from=resume_dir,
            clock=clock,
            seed=random_seed,
            threads=threads,
            profile_steps=profile_steps,
        )
        run = Run(
            run_id=run_id,
            name=name,
            directory=directory,
            engine=engine_impl,
            job=job,
            clock=clock,
            read_data=lambda: engine_impl.prepare_data(rendered, dataset),
            data_label=_data_label(dataset),
        )
    except OSError as err:
        undo(created)
        raise explain(err, directory, "results") from err
    try:
        registry.prune_registry(registry_path, now)  # it lists live and recent runs only
        registry.register_run(
            registry_path,
            registry.registry_entry(run_id, name, directory, os.getpid(), now, **_origin()),
        )
    except OSError as err:
        run._abandon()
        undo(created)
        raise explain(err, registry_path, "registry") from err
    live.add_run(run)
    _attach_monitoring(run, cfg, job if engine_impl.gpus_on_workers else None)
    _write_ludwig_files_at_end(run, rendered, dataset, random_seed)
    return PendingRun(run, created, registry_path)


def _resumed_inputs(
    resume_from: str | os.PathLike[str], config: Any, dataset: Any, name: str | None
) -> tuple[Any, Any, str | None]:
    """``config``, ``dataset`` and ``name``, each taken from the run resumed when not given.

    Raises ``FileNotFoundError`` when the run directory lacks what is missing, saying what
    to pass.
    """
    from ludwig_nb.runs.resume import resumed_run

    resumed = resumed_run(resume_from)
    where = str(resume_from)
    if config is None:
        if resumed.config is None:
            raise FileNotFoundError(
                f"cannot resume from {where!r} without a config: it has no {rundir.CONFIG_FILE} "
                "(pass the config, or the run directory of a stopped or crashed run)"
            )
        config = resumed.config
    if dataset is None:
        if resumed.dataset is None:
            raise FileNotFoundError(
                f"cannot resume from {where!r} without a dataset: the run does not name one "
                "(it trained on an in-memory table): pass the dataset"
            )
        dataset = resumed.dataset
    return config, dataset, name or resumed.name


def _data_label(dataset: Any) -> str:
    from ludwig_nb.data.sources import source_label

    return source_label(dataset)


def _checked(engine: Engine, cfg: Config) -> Engine:
    """An engine object given by the caller (a search's per-trial engine), after its check."""
    engine.check(cfg)
    return engine


def _check_resume(
    resume_from: str | os.PathLike[str] | None, engine: Engine, config: dict[str, Any]
) -> Path | None:
    """Return the checked run directory to resume from, or None.

    The run directory to resume from, checked by the engine before any thread starts (the checkpoint
    loads and fits the config). Raises ``FileNotFoundError`` or the engine's ``CheckpointError``,
    naming the file.
    """
    if resume_from is None:
        return None
    path = Path(resume_from)
    if not (path / "checkpoints").is_dir():
        raise FileNotFoundError(
            f"cannot resume from {str(path)!r}: it has no checkpoints/ folder "
            "(pass the run directory of a stopped or crashed run)"
        )
    engine.check_resume(path, config)  # engines that check in fit() inherit a no-op
    return path


def _attach_monitoring(run: Run, cfg: Config, remote: TrainJob | None = None) -> None:
    """Start GPU watching and alarms for this run when its config asks for them.

    ``remote``: the job of an engine whose workers read the GPUs on their own nodes.
    """
    from ludwig_nb.runs.monitoring import attach

    attach(run, cfg, remote)


def _write_ludwig_files_at_end(run: Run, config: Any, dataset: Any, seed: int | None) -> None:
    """training_statistics / test_statistics / description.json in Ludwig's shapes."""
    from ludwig_nb.runs.ludwig_files import write_ludwig_files

    source = _recorded(dataset)
    run.add_result_writer(lambda r: write_ludwig_files(r, config, source, seed))


def _recorded(dataset: Any) -> str | dict[str, Any] | None:
    """The dataset as ``description.json`` names it (None: an in-memory table)."""
    from ludwig_nb.runs.resume import recorded_dataset

    source = recorded_dataset(dataset)
    return source if isinstance(source, str | dict) else None


def load_model(path: str | os.PathLike[str]) -> TrainedModel:
    """Load a saved model in any process.

    ``path`` is a ``model/`` folder or a run directory; it loads with the engine its manifest names
    (a folder from before manifests: the built-in engine). Raises ``FileNotFoundError``,
    ``ValueError`` (a bad manifest, an unknown engine) and ``EngineUnavailable`` (the engine that
    saved it is not installed here).
    """
    from ludwig_nb.engines.manifest import read_manifest

    folder = Path(path)
    if (folder / rundir.MODEL_DIR).is_dir():
        folder = folder / rundir.MODEL_DIR
    if not folder.exists():
        raise FileNotFoundError(f"no saved model at {str(folder)!r}")
    manifest = read_manifest(folder)
    model: TrainedModel = get_engine(str(manifest["engine"])).load(folder, manifest)
    return model
