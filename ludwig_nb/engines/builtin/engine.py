"""``BuiltinEngine``: the embedded torch engine behind ``Engine.fit``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ludwig_nb.core.control import RunControl
from ludwig_nb.engines.base import Emit, TrainJob

if TYPE_CHECKING:
    from ludwig_nb.engines.builtin.model_io import BuiltinModel

__all__ = ["BuiltinEngine"]


class BuiltinEngine:
    """Trains Ludwig ECD configs with torch in the calling thread."""

    name = "builtin"

    def fit(self, job: TrainJob, emit: Emit, control: RunControl) -> BuiltinModel:
        """Train ``job``; see trainer.py for the events and the stop/pause contract.

        Raises ``DataError`` for bad data, ``TrainingDiverged`` for a NaN loss,
        ``ValueError`` for a config part this engine lacks; a stop is not an error.
        """
        # torch loads here, on the worker thread: train() and the dashboard do not wait
        # for it (it took ~4 s of a first run's 4.8-5.7 s to the dashboard)
        from ludwig_nb.engines.builtin.trainer import Training

        _set_threads(job.threads)
        return Training(job, emit, control).run()


def default_threads(cpus: int | None, env: dict[str, str]) -> int | None:
    """CPU threads for torch when the user chose none: all cores but one, so the kernel's
    main thread, the UI pump and the sampler stay responsive (on a 2-core machine two
    torch threads fighting the kernel were ~20x slower per step than one). None when
    ``OMP_NUM_THREADS`` is set: the user's choice stands."""
    if env.get("OMP_NUM_THREADS"):
        return None
    return max(1, (cpus or 1) - 1)


def _set_threads(requested: int | None) -> None:
    import torch

    threads = requested or default_threads(os.cpu_count(), dict(os.environ))
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
