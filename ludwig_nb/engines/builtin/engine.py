"""``BuiltinEngine``: the embedded torch engine behind ``Engine.fit``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ludwig_nb.core.control import RunControl
from ludwig_nb.engines.base import Emit, TrainJob
from ludwig_nb.engines.builtin.model_io import BuiltinModel
from ludwig_nb.engines.builtin.trainer import Training

__all__ = ["BuiltinEngine"]


class BuiltinEngine:
    """Trains Ludwig ECD configs with torch in the calling thread."""

    name = "builtin"

    def fit(self, job: TrainJob, emit: Emit, control: RunControl) -> BuiltinModel | None:
        """Train ``job``; see trainer.py for the events and the stop/pause contract.

        Raises ``DataError`` for bad data, ``TrainingDiverged`` for a NaN loss,
        ``ValueError`` for a config part this engine lacks; a stop is not an error
        (None when it came during preprocessing, before a model existed).
        """
        _set_threads(job.threads)
        return Training(job, emit, control).run()

    def check_resume(self, run_dir: Path, config: Mapping[str, Any]) -> None:
        """Before the thread: the run's latest checkpoint loads and fits ``config``.
        Raises ``FileNotFoundError`` / ``CheckpointError`` naming the file."""
        from ludwig_nb.engines.builtin.checkpoint import check_resume

        check_resume(run_dir, config)


def default_threads(cpus: int | None, env: dict[str, str]) -> int | None:
    """CPU threads for torch when the user chose none: all cores but one, so the kernel's
    main thread, the UI pump and the sampler stay responsive (on a 2-core machine two
    torch threads fighting the kernel were ~20x slower per step than one). None when
    ``OMP_NUM_THREADS`` is set: the user's choice stands."""
    if env.get("OMP_NUM_THREADS"):
        return None
    return max(1, (cpus or 1) - 1)


class _Defaults:
    threads_applied = False  # the default thread count is applied once per process


def _set_threads(requested: int | None) -> None:
    """``threads=`` sets torch's (process-wide) thread count; without it the default is
    applied once, by the first run of the process, and never changed behind the user's
    back afterwards (a later ``torch.set_num_threads`` of theirs stands)."""
    import torch

    if requested is None:
        if _Defaults.threads_applied:
            return
        _Defaults.threads_applied = True
    threads = requested or default_threads(os.cpu_count(), dict(os.environ))
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
