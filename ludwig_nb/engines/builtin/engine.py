"""``BuiltinEngine``: the embedded torch engine behind the engine contract (engines/base.py)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core.control import Control
from ludwig_nb.core.events import DataProgress, ScheduleInfo
from ludwig_nb.engines.base import Emit, Engine, TrainJob
from ludwig_nb.engines.devices import DeviceFacts, TorchDeviceFacts

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.core.memory_estimate import MemoryEstimate
    from ludwig_nb.engines.builtin.llm.model_io import LlmModel
    from ludwig_nb.engines.builtin.model_io import BuiltinModel

__all__ = ["BuiltinEngine", "default_threads"]

log = logging.getLogger(__name__)


class BuiltinEngine(Engine):
    """Trains Ludwig ECD configs with torch in the calling thread."""

    name = "builtin"
    check_modules = ("ludwig_nb.engines.builtin.capabilities",)
    data_modules = ("ludwig_nb.engines.builtin.preprocessing.pipeline",)

    def check(self, config: Config) -> None:
        """Raise ``UnsupportedByEngine`` for what this engine cannot run (capabilities.py)."""
        from ludwig_nb.engines.builtin.capabilities import check_builtin

        check_builtin(config)

    def prepare_data(self, config: Mapping[str, Any], dataset: Any) -> Any:
        """Load and check the data (columns, values, classes, non-empty splits).

        Raises ``DataError``, and for an LLM ``BaseModelUnavailable`` (before the data is
        read: a model that cannot be had is the first thing to fix). The table is loaded here,
        once: the thread preprocesses it. Image inputs have their paths made absolute and every
        image checked (its header and end).
        A file, while torch is not loaded, is read, checked and preprocessed by a second
        process instead (prefetch.py) while this one imports torch (the warm-up thread, started
        here if the CLI did not): the result is then its ``Prefetch`` handle, checked.
        """
        if _is_llm(config):  # the LLM engine tokenizes on its thread: no prefetch process
            from ludwig_nb.engines.builtin.llm.data import check_llm_data
            from ludwig_nb.engines.hub import check_base_model

            check_base_model(str(config.get("base_model") or ""))
            return check_llm_data(config, dataset)
        from ludwig_nb.engines.builtin import prefetch
        from ludwig_nb.engines.builtin.image.capabilities import image_inputs

        images = bool(image_inputs(config))  # read here: the image checks need the table
        if prefetch.wanted(dataset) and not images:
            from ludwig_nb.engines.base import config_seed
            from ludwig_nb.engines.builtin import warmup

            warmup.start()  # torch imports here while the child reads (the CLI started it)
            try:
                return prefetch.Prefetch(config, dataset, config_seed(config)).checked()
            except prefetch.PrefetchLost:
                log.debug("ludwig_nb: no prefetch process; reading here", exc_info=True)
        from ludwig_nb.data import check_dataset

        loaded = check_dataset(config, dataset)
        if not images:
            return loaded
        from ludwig_nb.engines.builtin.image.feature import prepare_image_columns

        # image paths made absolute (relative to the dataset file) and every image checked
        return prepare_image_columns(config, loaded, dataset)

    def plan(self, config: Mapping[str, Any], rows: int) -> ScheduleInfo:
        """The schedule over ``rows`` training rows at the config's batch size.

        An ``auto`` batch size plans with Ludwig's CPU default, 128 (an LLM's with 8, what
        ``auto`` picks on the CPU).
        """
        from ludwig_nb.engines.builtin.schedule import plan_training

        trainer = dict(config.get("trainer") or {})
        size = trainer.get("batch_size")
        batch_size = int(size) if isinstance(size, int) and size > 0 else 128
        if _is_llm(config):
            batch_size = int(size) if isinstance(size, int) and size > 0 else 8
            if trainer.get("type") == "none":
                return ScheduleInfo(total_steps=0, steps_per_epoch=1, epochs=0)
        return plan_training(trainer, rows, batch_size).info()

    def warm_up(self) -> None:
        """Pay a first fit's one-off costs.

        Torch, the engine's modules and a first optimizer step (the same warm-up ``%load_ext``
        starts).
        """
        from ludwig_nb.engines.builtin.warmup import warm_up

        warm_up()

    def start_warm_up(self) -> threading.Thread:
        """The warm-up in its one background thread (warmup.py), started once per process."""
        from ludwig_nb.engines.builtin import warmup

        return warmup.start()

    def use_in_kernel(self) -> None:
        """A kernel's runs read their data in the kernel, not in a prefetch process.

        Its warm-up loads pandas for the charts anyway, and a prefetch process only added its
        start-up to a first cell's data check (prefetch.py).
        """
        from ludwig_nb.engines.builtin import prefetch

        prefetch.read_in_this_process()

    def devices(self) -> DeviceFacts:
        """Torch's facts (its CUDA allocator, its version), once torch is imported."""
        return TorchDeviceFacts()

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> BuiltinModel | LlmModel | None:
        """Train ``job``; see trainer.py for the events and the stop/pause contract.

        Raises ``DataError`` for bad data, ``TrainingDiverged`` for a NaN loss,
        ``ValueError`` for a config part this engine lacks; a stop is not an error
        (None when it came during preprocessing, before a model existed).
        """
        # torch loads here, on the worker thread: train() and the dashboard do not wait
        # for it (it took ~4 s of a first run's 4.8-5.7 s to the dashboard)
        from ludwig_nb.engines.builtin import prefetch

        if not prefetch.engine_loaded():  # not imported (or importing)
            emit(DataProgress(time=(job.clock or time.time)(), stage="loading", source="torch"))
        _set_threads(job.threads)
        if _is_llm(job.config):
            from ludwig_nb.engines.builtin.llm.training import LlmTraining

            return LlmTraining(job, emit, control, engine=self.name).run()
        from ludwig_nb.engines.builtin.trainer import Training

        try:
            return Training(job, emit, control, engine=self.name).run()
        finally:
            if isinstance(job.dataset, prefetch.Prefetch):  # a stop during preprocessing: end it
                job.dataset.close()

    def estimate_memory(self, config: Mapping[str, Any], dataset: Any) -> MemoryEstimate | None:
        """The GPU memory a training step of ``config`` needs, before any trains.

        An LLM config's (llm/footprint.py); None for an ECD config. Raises what
        ``footprint.estimate_memory`` raises (an unreachable base model, missing data).
        """
        if not _is_llm(config):
            return None
        from ludwig_nb.engines.builtin.llm.footprint import estimate_memory

        return estimate_memory(config, dataset)

    def load(self, folder: Path, manifest: Mapping[str, Any]) -> BuiltinModel | LlmModel:
        """Load a model saved by this engine (raises ``FileNotFoundError``)."""
        if manifest.get("kind") == "llm":
            from ludwig_nb.engines.builtin.llm.model_io import load_llm_model

            return load_llm_model(folder / str(manifest.get("path") or "."))
        from ludwig_nb.engines.builtin.model_io import load_model

        return load_model(folder / str(manifest.get("path") or "."))

    def check_resume(self, run_dir: Path, config: Mapping[str, Any]) -> None:
        """Before the thread: the run's latest checkpoint loads and fits ``config``.

        Raises ``FileNotFoundError`` / ``CheckpointError`` naming the file.
        """
        if _is_llm(config):
            from ludwig_nb.engines.builtin.checkpoint import LATEST, load_checkpoint

            load_checkpoint(run_dir / "checkpoints" / LATEST, mmap=True)
            return
        from ludwig_nb.engines.builtin.checkpoint import check_resume

        check_resume(run_dir, config)


def _is_llm(config: Mapping[str, Any]) -> bool:
    """The engine's entry points dispatch on ``model_type`` (the ECD code has no LLM branch)."""
    return config.get("model_type") == "llm"


def default_threads(cpus: int | None, env: dict[str, str]) -> int | None:
    """CPU threads for torch when the user chose none.

    All cores but one, so the kernel's main thread, the UI pump and the sampler stay responsive (on
    a 2-core machine two torch threads fighting the kernel were ~20x slower per step than one). None
    when ``OMP_NUM_THREADS`` is set: the user's choice stands.
    """
    if env.get("OMP_NUM_THREADS"):
        return None
    return max(1, (cpus or 1) - 1)


class _Defaults:
    threads_applied = False  # the default thread count is applied once per process


def _set_threads(requested: int | None) -> None:
    """``threads=`` sets torch's (process-wide) thread count.

    Without it the default is applied once, by the first run of the process, and never changed
    behind the user's back afterwards (a later ``torch.set_num_threads`` of theirs stands).
    """
    import torch

    if requested is None:
        if _Defaults.threads_applied:
            return
        _Defaults.threads_applied = True
    threads = requested or default_threads(os.cpu_count(), dict(os.environ))
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
