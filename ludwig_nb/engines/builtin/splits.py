"""From a job's dataset to preprocessed arrays per split (training / validation / test).

pandas and numpy, never torch: the prefetch process (prefetch.py) runs this while the
training process imports torch; setup.py makes the arrays tensors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data import DataError, load_dataset, sample_rows, split_dataset, split_rows
from ludwig_nb.engines.builtin.image.tables import fit_features, transform_features
from ludwig_nb.engines.builtin.preprocessing.pipeline import (
    Arrays,
    FeatureProgress,
    drop_missing_rows,
    kept_rows,
)
from ludwig_nb.engines.builtin.stacks import input_stacks, stack_columns

__all__ = ["prepare_arrays"]

log = logging.getLogger(__name__)


def _frames(config: Mapping[str, Any], loaded: Any, seed: int) -> dict[str, pd.DataFrame]:
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


def _by_rows(config: Mapping[str, Any]) -> bool:
    """Whether the splits of one table can be cut from it column by column (no sampling).

    The table is then never copied whole per split.
    """
    prep = config.get("preprocessing") or {}
    return prep.get("sample_ratio") in (None, 1, 1.0) and prep.get("sample_size") is None


def _split_rows(config: Mapping[str, Any], frame: pd.DataFrame, seed: int) -> dict[str, Any]:
    """Row positions per split, less the rows a ``drop_row`` feature drops (as ``_frames``)."""
    rows = split_rows(frame, config.get("preprocessing") or {}, seed)
    keep = kept_rows(config, frame)
    if keep.all():
        return rows
    for name, positions in rows.items():
        rows[name] = positions[keep[positions]]
        if not len(rows[name]):
            raise DataError(f"the {name} split is empty after dropping rows with missing values")
    return rows


def _fit_by_column(
    config: Mapping[str, Any],
    frame: pd.DataFrame,
    rows: Any,
    on_feature: FeatureProgress | None = None,
) -> dict[str, Any]:
    """Fit preprocessing on some rows of ``frame``, one feature at a time.

    ``fit_preprocessing`` on the rows ``rows`` of ``frame``, one feature at a time (the training
    split is never copied whole). Same metadata, same feature order.
    """
    metadata: dict[str, Any] = {"features": {}}
    total = len(config.get("input_features") or []) + len(config.get("output_features") or [])
    index = 0
    for role in ("input_features", "output_features"):
        for feature in config.get(role) or []:
            index += 1
            if on_feature is not None:
                on_feature(index, total, str(feature["name"]), len(rows))
            column = str(feature.get("column") or feature["name"])
            part = frame[[column]].iloc[rows] if column in frame.columns else frame.iloc[:0, :0]
            fitted = fit_features({role: [feature]}, part)
            metadata["features"].update(fitted["features"])
            metadata["version"] = fitted["version"]
    return {"version": metadata.pop("version", None), **metadata}


def _transform_rows(
    metadata: Mapping[str, Any],
    frame: pd.DataFrame,
    rows: Any,
    stacks: Mapping[str, tuple[str, ...]],
) -> Arrays:
    """The split at positions ``rows`` of ``frame``, transformed one column at a time.

    Stacked features are written into their matrix as they come (no second copy).
    """
    arrays: dict[str, Any] = {}
    matrices = {
        key: np.empty((len(rows), len(names)), dtype=np.float32) for key, names in stacks.items()
    }
    where = {name: (key, i) for key, names in stacks.items() for i, name in enumerate(names)}
    for name, meta in metadata["features"].items():
        column = meta["column"]
        part = frame[[column]].iloc[rows] if column in frame.columns else frame.iloc[:0, :0]
        (values,) = transform_features({**metadata, "features": {name: meta}}, part).values()
        if name in where:
            key, i = where[name]
            matrices[key][:, i] = values[0]
        else:
            arrays[name] = values
    arrays.update((key, (matrix,)) for key, matrix in matrices.items())
    return arrays


def _stacked(arrays: Arrays, stacks: Mapping[str, tuple[str, ...]]) -> Arrays:
    """``arrays`` with each stack's 1-D features moved into its matrix (popped as copied)."""
    for key, names in stacks.items():
        present = [n for n in names if n in arrays]
        if present:
            arrays[key] = (stack_columns(arrays, present),)
    return arrays


def prepare_arrays(
    config: Mapping[str, Any],
    dataset: Any,
    seed: int,
    metadata: Mapping[str, Any] | None = None,
    on_feature: FeatureProgress | None = None,
) -> tuple[dict[str, Any], dict[str, Arrays]]:
    """Split, fit preprocessing and transform every split: metadata and arrays per split.

    Preprocessing is fitted as Ludwig fits it, on the rows of every split (vocabularies,
    normalisation, fill values: the same model as Ludwig's from the same config and seed),
    unless ``metadata`` is given (as on resume);
    ``on_feature(index, total, name, rows)`` is told before each feature is fitted. The
    stackable inputs (stacks.py) come as one float32 matrix per split. Raises ``DataError``.
    """
    stacks = input_stacks(config)
    loaded = load_dataset(dataset)
    arrays: dict[str, Arrays] = {}
    if isinstance(loaded, pd.DataFrame) and _by_rows(config):
        rows = _split_rows(config, loaded, seed)
        if metadata is None:  # on every split's rows, in the table's order, as Ludwig fits
            positions = np.sort(np.concatenate([np.asarray(r) for r in rows.values()]))
            metadata = _fit_by_column(config, loaded, positions, on_feature)
        for name, positions in rows.items():
            arrays[name] = _transform_rows(metadata, loaded, positions, stacks)
    else:
        frames = _frames(config, loaded, seed)
        if metadata is None:  # on every split, as Ludwig fits: one table's rows in its order
            table = pd.concat(frames.values())
            if not isinstance(loaded, dict):  # (split files: training, validation, test)
                table = table.sort_index(kind="stable")
            metadata = fit_features(config, table, on_feature)
        for name in list(frames):  # one split's frame at a time, released once transformed
            arrays[name] = _stacked(transform_features(metadata, frames.pop(name)), stacks)
    log.info("rows per split: %s", {k: _rows(v) for k, v in arrays.items()})
    return dict(metadata), arrays


def _rows(arrays: Arrays) -> int:
    first = next(iter(arrays.values()), None)
    return len(first[0]) if first else 0
