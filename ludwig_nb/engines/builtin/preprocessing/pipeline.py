"""Fit per-feature preprocessing on the training split and apply it to any frame.

The metadata is a JSON-serialisable dict saved with the model and the checkpoints::

    {"version": 1, "features": {name: {"type", "column", "role", ...per-type fields}}}

``transform_frame`` uses only this metadata, so a loaded model applies exactly the
transforms it was trained with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.missing import is_missing
from ludwig_nb.data.values import fit_binary
from ludwig_nb.engines.builtin.preprocessing import numeric, structured, vocab
from ludwig_nb.engines.builtin.preprocessing.feature_types import INPUT_TYPES, OUTPUT_TYPES

__all__ = [
    "INPUT_TYPES",
    "METADATA_VERSION",
    "OUTPUT_TYPES",
    "Arrays",
    "FeatureProgress",
    "drop_missing_rows",
    "fit_preprocessing",
    "transform_frame",
]

#: 2: Ludwig 0.11's vocabulary layout (special symbols, <SOS>/<EOS> framing, category inputs
#: without <UNK>); models saved with version 1 were built differently and are not loaded
METADATA_VERSION = 2
_DEFAULT_TOKENIZER = {"text": "space_punct", "sequence": "space", "set": "space", "bag": "space"}
_LAYOUT = {"text": "sequence", "sequence": "sequence", "set": "set", "bag": "bag"}

#: Transformed columns: feature name -> one or more arrays with rows first.
Arrays = dict[str, tuple[np.ndarray, ...]]


def _column(feature: Mapping[str, Any]) -> str:
    return str(feature.get("column") or feature["name"])


def _features(config: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [("input", f) for f in config.get("input_features") or []] + [
        ("output", f) for f in config.get("output_features") or []
    ]


def _fit_one(kind: str, series: pd.Series, prep: Mapping[str, Any], role: str) -> dict[str, Any]:
    column = str(series.name)
    output = role == "output"
    if kind == "number":
        return numeric.fit_number(series, prep, column)
    if kind == "binary":
        return fit_binary(series, prep, column, say=False)  # the data check said it
    if kind == "category":
        return vocab.fit_category(series, prep, output=output)
    if kind in _DEFAULT_TOKENIZER:
        return vocab.fit_tokens(series, prep, _DEFAULT_TOKENIZER[kind], _LAYOUT[kind])
    if kind == "vector":
        return structured.fit_vector(series, prep, column)
    if kind == "date":
        return structured.fit_date(series, prep, column)
    raise DataError(f"feature type {kind!r} is not supported by the built-in engine")


#: told before each feature is fitted: ``(index 1-based, total, feature name, rows)``
FeatureProgress = Callable[[int, int, str, int], None]


def fit_preprocessing(
    config: Mapping[str, Any],
    training: pd.DataFrame,
    on_feature: FeatureProgress | None = None,
) -> dict[str, Any]:
    """Fit every feature of ``config`` on the training split; raises :class:`DataError`.

    ``on_feature(index, total, name, rows)`` is called before each feature is fitted.
    """
    features: dict[str, Any] = {}
    listed = _features(config)
    for index, (role, feature) in enumerate(listed, start=1):
        if on_feature is not None:
            on_feature(index, len(listed), str(feature["name"]), len(training))
        kind = feature["type"]
        allowed = INPUT_TYPES if role == "input" else OUTPUT_TYPES
        if kind not in allowed:
            raise DataError(f"{role} feature {feature['name']!r}: type {kind!r} is not supported")
        prep = dict(feature.get("preprocessing") or {})
        meta = _fit_one(kind, training[_column(feature)], prep, role)
        meta.update(type=kind, column=_column(feature), role=role)
        features[feature["name"]] = meta
    return {"version": METADATA_VERSION, "features": features}


def kept_rows(
    config: Mapping[str, Any], frame: pd.DataFrame, *, outputs: bool = True
) -> np.ndarray:
    """Bool ``[rows]``: False where a feature whose strategy is ``drop_row`` misses a value."""
    keep = np.ones(len(frame), dtype=bool)
    for role, feature in _features(config):
        if role == "output" and not outputs:
            continue
        prep = feature.get("preprocessing") or {}
        if prep.get("missing_value_strategy") == "drop_row" and _column(feature) in frame:
            keep &= ~is_missing(frame[_column(feature)])
    return keep


def drop_missing_rows(
    config: Mapping[str, Any], frame: pd.DataFrame, *, outputs: bool = True
) -> pd.DataFrame:
    """Drop rows missing a value in a feature whose strategy is ``drop_row``."""
    keep = kept_rows(config, frame, outputs=outputs)
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def _transform_one(meta: Mapping[str, Any], series: pd.Series) -> tuple[np.ndarray, ...]:
    kind, column = meta["type"], meta["column"]
    if kind == "number":
        return (numeric.transform_number(series, meta, column),)
    if kind == "binary":
        return (numeric.transform_binary(series, meta, column),)
    if kind == "category":
        return (vocab.transform_category(series, meta),)
    if kind in ("text", "sequence"):
        return (vocab.transform_sequence(series, meta),)
    if kind == "set" and meta["role"] == "output":
        return (vocab.transform_multi_hot(series, meta),)
    if kind in ("set", "bag"):
        return vocab.transform_token_bag(series, meta)
    if kind == "vector":
        return (structured.transform_vector(series, meta, column),)
    return (structured.transform_date(series, meta, column),)


def transform_frame(
    metadata: Mapping[str, Any], frame: pd.DataFrame, *, outputs: bool = True
) -> Arrays:
    """Apply the saved transforms; output features only when ``outputs`` (evaluation).

    Raises :class:`DataError` for a missing column or a value the metadata cannot map.
    """
    arrays: Arrays = {}
    for name, meta in metadata["features"].items():
        if meta["role"] == "output" and not outputs:
            continue
        if meta["column"] not in frame.columns:
            raise DataError(f"column {meta['column']!r} (feature {name!r}) not in the data")
        arrays[name] = _transform_one(meta, frame[meta["column"]].reset_index(drop=True))
    return arrays
