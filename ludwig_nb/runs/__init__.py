"""Runs: one run. The ``Run`` handle, its worker thread, its run directory, and saved models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ludwig_nb.engines.errors import CheckpointError, ModelLoadError
from ludwig_nb.runs.api import load_model, train
from ludwig_nb.runs.ledger import EventSubscription
from ludwig_nb.runs.run import Run
from ludwig_nb.store.directories import RunDirectoryError

if TYPE_CHECKING:
    from ludwig_nb.config import ConfigSource
    from ludwig_nb.runs.preflight import Prediction
    from ludwig_nb.runs.sweep import SweepEstimate

__all__ = [
    "CheckpointError",
    "EventSubscription",
    "ModelLoadError",
    "Run",
    "RunDirectoryError",
    "estimate",
    "load_model",
    "train",
]


def estimate(
    config: ConfigSource,  # YAML text, a dict or a Config, as train() takes
    dataset: object,  # a DataFrame, a path or "demo:NAME", as train() takes
    vary: Mapping[str, Sequence[object]] | None = None,
    **kwargs: Any,  # the keyword options of preflight.estimate / sweep.estimate_sweep
) -> Prediction | SweepEstimate:
    """Pre-flight prediction of a run's total time: see ``ludwig_nb.runs.preflight``.

    ``vary={"trainer.batch_size": [32, 64, 128]}``: one pilot per value, a table and a plot
    of predicted time per epoch, total time, samples/s and peak GPU memory, with the values
    that do not fit and the fastest that does (``ludwig_nb.runs.sweep``).
    """
    if vary is not None:
        from ludwig_nb.runs.sweep import estimate_sweep

        return estimate_sweep(config, dataset, vary, **kwargs)
    from ludwig_nb.runs.preflight import estimate as _estimate

    return _estimate(config, dataset, **kwargs)
