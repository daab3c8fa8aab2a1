"""From a job's dataset to preprocessed tensors per split (training / validation / test)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ludwig_nb.data import (
    DataError,
    drop_missing_rows,
    fit_preprocessing,
    load_dataset,
    sample_rows,
    split_dataset,
    transform_frame,
)
from ludwig_nb.engines.builtin.device import TensorData
from ludwig_nb.engines.builtin.model import input_stacks

__all__ = ["prepare_splits"]

log = logging.getLogger(__name__)


def _frames(config: Mapping[str, Any], dataset: Any, seed: int) -> dict[str, pd.DataFrame]:
    loaded = load_dataset(dataset)
    preprocessing = config.get("preprocessing") or {}
    if isinstance(loaded, dict):
        frames = dict(loaded)
        frames["training"] = sample_rows(frames["training"], preprocessing, seed)
    else:
        frames = split_dataset(loaded, preprocessing, seed)
    for name, frame in list(frames.items()):
        frames[name] = drop_missing_rows(config, frame)
        if frames[name].empty:
            raise DataError(f"the {name} split is empty after dropping rows with missing values")
    return frames


def prepare_splits(
    config: Mapping[str, Any],
    dataset: Any,
    seed: int,
    metadata: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, TensorData]]:
    """Split, fit preprocessing on the training split (unless ``metadata`` is given, as
    on resume) and transform every split. Raises ``DataError``."""
    frames = _frames(config, dataset, seed)
    if metadata is None:
        metadata = fit_preprocessing(config, frames["training"])
    stacks = input_stacks(config)
    tensors = {}
    for name in list(frames):  # one split's frame at a time, released once transformed
        tensors[name] = TensorData(transform_frame(metadata, frames.pop(name)), stacks)
    log.info("rows per split: %s", {k: v.rows for k, v in tensors.items()})
    return dict(metadata), tensors
