"""``train()`` and ``load_model()``: the public entry points of the run layer.

Everything that can be checked before a thread starts is checked here, on the caller's
thread: the config (``ConfigError``), the dataset and its columns (``DataError``), the
checkpoint to resume from. Only then does the worker thread start.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ludwig_nb.core import rundir
from ludwig_nb.engines.base import TrainJob
from ludwig_nb.engines.registry import AUTO, get_engine, select_engine
from ludwig_nb.runs import live
from ludwig_nb.runs.directories import explain, make_run_directory, undo
from ludwig_nb.runs.run import Run

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.base import Engine, TrainedModel

__all__ = ["default_registry_dir", "load_model", "make_run_id", "train"]

#: libyaml's safe dumper when PyYAML has it (the same text as ``yaml.safe_dump``, ~5x faster
#: on a rendered config), else the pure-Python one
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def default_registry_dir() -> Path:
    """``<jupyter runtime dir>/ludwig_nb/runs`` (honours ``JUPYTER_RUNTIME_DIR``)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return rundir.registry_dir(Path(jupyter_runtime_dir()))


def make_run_id(name: str, now: float) -> str:
    """``<name>-<yyyymmdd-hhmmss>-<4 hex>``; the name is reduced to safe characters."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:60] or "run"
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
    """Validate, then train in a daemon thread; returns the :class:`Run` at once.

    ``config``: YAML text, a dict or a ``Config``. ``dataset``: a DataFrame, a path (CSV,
    TSV, Parquet, JSON, JSONL) or ``{"training": ..., "validation": ..., "test": ...}``.
    ``wait=True`` returns after the run ends. ``random_seed`` (default 42, as in Ludwig)
    makes runs reproducible; ``threads`` sets the CPU threads torch uses (default: all
    cores but one). ``engine``: "builtin", "ludwig" (real Ludwig, the ``[ludwig]`` extra) or
    "auto": the built-in engine when it can run the config, else Ludwig when installed (an
    engine object is also taken, after its check: a search's trials on Ray Tune).
    ``profile_steps=N`` records N training steps (after 4 warm-up steps) with
    torch.profiler: ``torch_trace.json`` (Chrome/Perfetto) and the top operators
    (``run.top_ops``) in the run directory.
    Raises ``ConfigError`` (``UnsupportedByEngine`` for a valid config the engine cannot
    run), ``EngineUnavailable`` / ``DataError`` / ``CheckpointError`` / ``RunDirectoryError``
    (an ``OSError`` naming the path) before any thread starts, ``ValueError`` for a negative
    ``profile_steps``, and leaves no run directory behind when it raises.
    """
    if not isinstance(profile_steps, int) or profile_steps < 0:
        raise ValueError(f"profile_steps must be a whole number >= 0, got {profile_steps!r}")
    cfg = _load(config)
    engine_impl = select_engine(engine, cfg) if isinstance(engine, str) else _checked(engine, cfg)
    rendered = cfg.to_dict()
    data = engine_impl.prepare_data(rendered, dataset)
    resume_dir = _check_resume(resume_from, engine_impl, rendered)

    now = clock()
    name = name or "run"
    run_id = make_run_id(name, now)
    directory, created = make_run_directory(Path(results_dir).resolve(), run_id)
    registry = Path(registry_dir) if registry_dir is not None else default_registry_dir()
    try:
        (directory / rundir.CONFIG_FILE).write_text(
            yaml.dump(rendered, Dumper=_YAML_DUMPER, sort_keys=False), encoding="utf-8"
        )
        job = TrainJob(
            config=rendered,
            dataset=data,
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
            run_id=run_id, name=name, directory=directory, engine=engine_impl, job=job, clock=clock
        )
    except OSError as err:
        undo(created)
        raise explain(err, directory, "results") from err
    try:
        rundir.prune_registry(registry, now)  # the registry lists live and recent runs only
        rundir.register_run(
            registry,
            rundir.registry_entry(run_id, name, directory, os.getpid(), now, **_origin()),
        )
    except OSError as err:
        run._abandon()
        undo(created)
        raise explain(err, registry, "registry") from err
    live.add_run(run)
    _attach_monitoring(run, cfg, job if getattr(engine_impl, "gpus_on_workers", False) else None)
    _write_ludwig_files_at_end(run, rendered, dataset, random_seed)
    run.start()
    if wait:
        run.wait()
    return run


def _checked(engine: Engine, cfg: Config) -> Engine:
    """An engine object given by the caller (a search's per-trial engine), after its check."""
    engine.check(cfg)
    return engine


def _check_resume(
    resume_from: str | os.PathLike[str] | None, engine: Any, config: dict[str, Any]
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
    check = getattr(engine, "check_resume", None)  # engines without one check in fit()
    if check is not None:
        check(path, config)
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

    source = dataset if isinstance(dataset, (str, os.PathLike, dict)) else None
    if isinstance(source, os.PathLike):
        source = str(source)
    run.add_result_writer(lambda r: write_ludwig_files(r, config, source, seed))


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
