"""``LudwigEngine``: real Ludwig behind the engine contract (engines/base.py).

A run's directory holds Ludwig's own output layout, so ``ludwig visualize`` and
``LudwigModel.load`` work on it, and our ``model/`` folder points into it::

    <run dir>/ludwig/experiment_run/       Ludwig's output directory (model/,
                                           training_statistics.json, description.json)
    <run dir>/model/ludwig_nb_model.json   {"engine": "ludwig",
                                            "path": "../ludwig/experiment_run/model"}
    <run dir>/training_statistics.json     a copy of Ludwig's

Nothing here imports Ludwig at module level: ``fit`` imports it inside the run (10-20 s), as
the phase "preprocessing: importing Ludwig".
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control
from ludwig_nb.engines.base import Emit, Engine, EngineUnavailable, TrainJob
from ludwig_nb.engines.devices import DeviceFacts, TorchDeviceFacts
from ludwig_nb.engines.ludwig.schedule import plan_from_config

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.engines.ludwig.model import LudwigTrainedModel

__all__ = ["INSTALL_HINT", "LudwigEngine", "ludwig_missing"]

INSTALL_HINT = 'pip install "ludwig_nb[ludwig]"'


def ludwig_missing() -> str | None:
    """Why Ludwig cannot run here (one line with what to install), or None when it can.

    Cheap: looks the package up without importing it.
    """
    if importlib.util.find_spec("ludwig") is None:
        return f"engine: ludwig needs Ludwig installed: {INSTALL_HINT}"
    return None


class LudwigEngine(Engine):
    """Trains any valid Ludwig config with Ludwig itself, in the calling thread."""

    name = "ludwig"
    shares_splits = False  # Ludwig splits a table with its own random generator

    def check(self, config: Config) -> None:
        """Ludwig trains every valid config, here in the kernel's thread on the local backend.

        A ``backend`` other than local and a ``hyperopt`` section are refused
        (``UnsupportedByEngine``, located) rather than dropped. Raises ``EngineUnavailable`` when
        Ludwig is not installed.
        """
        _check_local_training(config)
        missing = ludwig_missing()
        if missing is not None:
            raise EngineUnavailable(missing)

    def prepare_data(self, config: Mapping[str, Any], dataset: Any) -> Any:
        """Check the columns only (a file's header, not its rows).

        Ludwig loads, splits and preprocesses in the run's thread. Raises ``DataError``, and
        for an LLM ``BaseModelUnavailable`` first (its weights cannot be had here).
        """
        from ludwig_nb.data.loading import check_columns

        if config.get("model_type") == "llm":
            from ludwig_nb.engines.hub import check_base_model

            check_base_model(str(config.get("base_model") or ""))

        check_columns(config, dataset)
        return dataset

    def plan(self, config: Mapping[str, Any], rows: int) -> ev.ScheduleInfo:
        """The schedule Ludwig's trainer follows over ``rows`` training rows."""
        return plan_from_config(config, rows)

    def devices(self) -> DeviceFacts:
        """Torch's facts: Ludwig trains with torch in this process."""
        return TorchDeviceFacts()

    def warm_up(self) -> None:
        """Import Ludwig (10-20 s), so that a pilot measures training, not the import."""
        import ludwig.api  # noqa: F401

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> LudwigTrainedModel:
        """Train ``job`` with ``LudwigModel.train`` and the callback in callback.py.

        Raises ``EngineUnavailable`` (Ludwig missing), ``ValueError`` (an option this engine
        does not take: ``device``, ``resume_from``), ``BaseModelUnavailable`` for an LLM whose
        weights cannot be fetched, and whatever Ludwig raises; a stop is not an error.
        """
        clock = job.clock or time.time
        _refuse_options(job)
        if job.config.get("model_type") == "llm":
            emit(ev.PhaseChanged(time=clock(), phase="preprocessing", detail="finding the LLM"))
            from ludwig_nb.engines.hub import check_base_model

            check_base_model(str(job.config.get("base_model") or ""))
        emit(ev.PhaseChanged(time=clock(), phase="preprocessing", detail="importing Ludwig"))
        from ludwig_nb.engines.ludwig.training import LudwigTraining

        _set_threads(job.threads)
        return LudwigTraining(job, emit, control, clock).run()

    def load(self, folder: Path, manifest: Mapping[str, Any]) -> LudwigTrainedModel:
        """``LudwigModel.load`` on the folder the manifest points at."""
        from ludwig_nb.engines.ludwig.model import load_ludwig_model

        missing = ludwig_missing()
        if missing is not None:
            raise EngineUnavailable(f"{folder} holds a Ludwig model: {missing}")
        return load_ludwig_model((folder / str(manifest.get("path") or ".")).resolve())


def _check_local_training(config: Config) -> None:
    from ludwig_nb.config.errors import ConfigError, UnsupportedByEngine
    from ludwig_nb.config.schema.fields import Ctx

    rendered = config.to_dict()
    ctx = Ctx(config.positions)
    backend = (rendered.get("backend") or {}).get("type")
    if backend not in (None, "local"):
        ctx.problem(
            ("backend", "type"),
            f"backend '{backend}' is not run by engine: ludwig (it trains locally, in "
            "the kernel's thread)",
            kind=UnsupportedByEngine,
            hint=f"drop the backend section, or run `ludwig train` for Ludwig's {backend} backend",
        )
    if rendered.get("hyperopt") is not None:
        ctx.problem(
            ("hyperopt",),
            "a config with a hyperopt section is a search, not one "
            "training run (engine: ludwig trains one model)",
            kind=UnsupportedByEngine,
            hint="search it with %%ludwig_hyperopt, ludwig_nb.hyperopt(config, dataset) "
            "or `ludwig-nb hyperopt`, or drop the hyperopt section to train one "
            "model",
        )
    if ctx.problems:
        raise ConfigError.collect(ctx.problems)


def _refuse_options(job: TrainJob) -> None:
    if job.device not in (None, "auto"):
        raise ValueError(
            f"engine: ludwig chooses its device itself (the first GPU, else the CPU); "
            f"device={job.device!r} is not passed on: leave it unset"
        )
    if job.resume_from is not None:
        raise ValueError("engine: ludwig does not resume runs yet; start a new run")


def _set_threads(requested: int | None) -> None:
    import torch

    from ludwig_nb.engines.builtin.engine import default_threads

    threads = requested or default_threads(os.cpu_count(), dict(os.environ))
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
