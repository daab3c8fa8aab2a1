"""The run's trivial baseline, computed on the worker thread before the engine starts.

The dataset is split exactly as the built-in engine splits it (same split function, same
seed), so the baseline's predictor comes from the training split the model learns from.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.engines.base import PreparedDataset, TrainJob, job_seed

__all__ = ["baseline_event", "preprocessing_detail"]

log = logging.getLogger(__name__)


def baseline_event(job: TrainJob, clock: Callable[[], float]) -> ev.BaselineComputed | None:
    """The ``BaselineComputed`` event of ``job``, or None when no output has a baseline.

    Never raises: a baseline is a courtesy, and the engine reports bad data itself.
    """
    prepared = job.dataset if isinstance(job.dataset, PreparedDataset) else None
    if prepared is not None and prepared.seed == job_seed(job):  # computed where it was read
        metrics, predictors = prepared.baseline() or ({}, {})
        return _event(metrics, predictors, clock)
    if prepared is not None:  # split with another seed: from the file, here
        job = dataclasses.replace(job, dataset=prepared.source)
    from ludwig_nb.data import load_dataset
    from ludwig_nb.data.baseline import table_baseline

    try:
        metrics, predictors = table_baseline(job.config, load_dataset(job.dataset), job_seed(job))
    except Exception:  # the engine's own checks word data problems for the user
        log.debug("ludwig_nb: no baseline for run %s", job.run_id, exc_info=True)
        return None
    return _event(metrics, predictors, clock)


def _event(
    metrics: dict[str, Any], predictors: dict[str, Any], clock: Callable[[], float]
) -> ev.BaselineComputed | None:
    if not metrics:
        return None
    return ev.BaselineComputed(time=clock(), metrics=metrics, predictors=predictors)


def preprocessing_detail(job: TrainJob) -> str:
    """``"5,000 rows · 8 input features, 1 output"`` for the preprocessing phase."""
    rows = None
    data = job.dataset
    if isinstance(data, PreparedDataset):
        rows = data.rows
    elif isinstance(data, dict):
        rows = sum(len(frame) for frame in data.values() if hasattr(frame, "__len__"))
    elif hasattr(data, "__len__") and not isinstance(data, str):
        rows = len(data)
    inputs = len(job.config.get("input_features") or [])
    outputs = len(job.config.get("output_features") or [])
    plural = "" if outputs == 1 else "s"
    features = f"{inputs} input features, {outputs} output{plural}"
    return f"{rows:,} rows · {features}" if rows is not None else features
