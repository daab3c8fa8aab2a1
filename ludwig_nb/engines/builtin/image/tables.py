"""Preprocessing of a whole config with image inputs: the image features here, the rest as usual.

:func:`fit_features` and :func:`transform_features` are ``fit_preprocessing`` and
``transform_frame`` (the per-feature preprocessing) with the image inputs fitted and decoded by
this package; the metadata and the arrays keep the config's feature order. A config without image
inputs goes through the usual functions untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.feature import fit_image_feature, transform_image_feature
from ludwig_nb.engines.builtin.preprocessing.pipeline import fit_preprocessing, transform_frame

__all__ = ["fit_features", "transform_features"]

#: told before each feature is fitted: ``(index 1-based, total, feature name, rows)``
FeatureProgress = Callable[[int, int, str, int], None]


def _listed(config: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [("input_features", f) for f in config.get("input_features") or []] + [
        ("output_features", f) for f in config.get("output_features") or []
    ]


def fit_features(
    config: Mapping[str, Any], frame: pd.DataFrame, on_feature: FeatureProgress | None = None
) -> dict[str, Any]:
    """``fit_preprocessing(config, frame, on_feature)`` with image inputs fitted here."""
    listed = _listed(config)
    if not any(f.get("type") == "image" for _, f in listed):
        return fit_preprocessing(config, frame, on_feature)
    features: dict[str, Any] = {}
    version = None
    for index, (role, feature) in enumerate(listed, start=1):
        if on_feature is not None:
            on_feature(index, len(listed), str(feature["name"]), len(frame))
        column = str(feature.get("column") or feature["name"])
        if feature.get("type") == "image" and role == "input_features":
            if column not in frame.columns:
                raise DataError(f"column {column!r} (feature {feature['name']!r}) not in the data")
            meta = fit_image_feature(frame[column].rename(column), feature)
            features[feature["name"]] = {**meta, "type": "image", "column": column, "role": "input"}
            continue
        fitted = fit_preprocessing({role: [feature]}, frame[[column]] if column in frame else frame)
        features.update(fitted["features"])
        version = fitted["version"]
    if version is None:
        version = fit_preprocessing({}, frame.iloc[:0, :0])["version"]
    return {"version": version, "features": features}


def transform_features(
    metadata: Mapping[str, Any], frame: pd.DataFrame, *, outputs: bool = True
) -> dict[str, tuple[Any, ...]]:
    """``transform_frame(metadata, frame, outputs=outputs)`` with image inputs decoded here.

    An image input's arrays are one uint8 ``rows x C x H x W`` array or a disk cache
    (``DiskImages``). Raises :class:`DataError`.
    """
    images = {n: m for n, m in metadata["features"].items() if m.get("type") == "image"}
    if not images:
        return transform_frame(metadata, frame, outputs=outputs)
    others = {n: m for n, m in metadata["features"].items() if n not in images}
    rest = transform_frame({**metadata, "features": others}, frame, outputs=outputs)
    arrays: dict[str, tuple[Any, ...]] = {}
    for name, meta in metadata["features"].items():
        if name in images:
            column = meta["column"]
            if column not in frame.columns:
                raise DataError(f"column {column!r} (feature {name!r}) not in the data")
            arrays[name] = transform_image_feature(frame[column], meta, column)
        elif name in rest:
            arrays[name] = rest[name]
    return arrays
