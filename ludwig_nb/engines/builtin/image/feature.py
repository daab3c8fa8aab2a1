"""The image feature's entry points: the check before the thread, fit and transform.

* :func:`prepare_image_columns` (``prepare_data``, before any thread): every image column of the
  loaded table(s) gets its paths made absolute (relative to the dataset file's folder, or the
  working directory for a DataFrame) and every image checked (checks.py). The caller's DataFrame
  is never changed: a resolved column goes into a shallow copy.
* :func:`fit_image_feature`: the metadata, on the training split (fitting.py).
* :func:`transform_image_feature`: missing cells filled (``bfill``, ``ffill``, ``fill_with_mode``,
  ``fill_with_const``; ``drop_row`` rows are gone already), then the decode pass (decoding.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.capabilities import image_inputs
from ludwig_nb.engines.builtin.image.cells import Constant, missing_mask
from ludwig_nb.engines.builtin.image.checks import check_image_column, resolve_column
from ludwig_nb.engines.builtin.image.decoding import Decoded, decode_cells
from ludwig_nb.engines.builtin.image.fitting import fit_image
from ludwig_nb.engines.builtin.image.pixels import Geometry

__all__ = [
    "FILL_STRATEGIES",
    "fit_image_feature",
    "geometry_of",
    "image_inputs",
    "prepare_image_columns",
    "transform_image_feature",
]

#: the missing-value strategies an image input can use
FILL_STRATEGIES = ("bfill", "ffill", "fill_with_mode", "fill_with_const", "drop_row")


def _column(feature: Mapping[str, Any]) -> str:
    return str(feature.get("column") or feature["name"])


def _base(source: Any) -> Path:
    """The folder relative image paths start from: the dataset file's, or the working one."""
    if isinstance(source, str | os.PathLike) and not str(source).startswith("demo:"):
        return Path(source).expanduser().resolve().parent
    return Path.cwd()


def _prepare_frame(
    features: list[Mapping[str, Any]], frame: pd.DataFrame, source: Any, where: str, check: bool
) -> pd.DataFrame:
    base = _base(source)
    copied = frame.copy(deep=False)
    for feature in features:
        column = _column(feature)
        if column not in copied.columns:
            continue  # the column check names it
        copied[column] = resolve_column(copied[column], base)
        if check:
            check_image_column(copied[column], column, where)
    return copied


def prepare_image_columns(
    config: Mapping[str, Any], loaded: Any, source: Any, *, check: bool = True
) -> Any:
    """``loaded`` (a frame or frames per split) with image paths resolved and every image checked.

    ``source``: the dataset as given (a path, a DataFrame, or a dict of them per split).
    ``check=False`` only resolves the paths (where the images are read on other machines).
    Raises :class:`DataError` naming the column, rows and files of unreadable images.
    """
    features = image_inputs(config)
    if not features:
        return loaded
    if isinstance(loaded, dict):
        sources = source if isinstance(source, Mapping) else {}
        return {
            name: _prepare_frame(features, frame, sources.get(name), f"{name} split", check)
            for name, frame in loaded.items()
        }
    where = str(source) if isinstance(source, str | os.PathLike) else "the dataset"
    return _prepare_frame(features, loaded, source, where, check)


def fit_image_feature(series: pd.Series, feature: Mapping[str, Any]) -> dict[str, Any]:
    """An image input's metadata from the training split (raises :class:`DataError`)."""
    prep = dict(feature.get("preprocessing") or {})
    encoder = dict(feature.get("encoder") or {})
    strategy = prep.get("missing_value_strategy") or "bfill"
    if strategy not in FILL_STRATEGIES:
        raise DataError(
            f"image column {series.name!r}: missing_value_strategy {strategy!r} does not apply "
            f"to images; use one of {', '.join(FILL_STRATEGIES)}"
        )
    return fit_image(series, prep, encoder, str(series.name))


def geometry_of(meta: Mapping[str, Any]) -> Geometry:
    """What the metadata says each image becomes."""
    return Geometry(
        height=int(meta["height"]),
        width=int(meta["width"]),
        channels=int(meta["num_channels"]),
        resize_method=str(meta.get("resize_method") or "interpolate"),
        shorter_side=meta.get("shorter_side"),
        interpolation=str(meta.get("interpolation") or "bilinear"),
    )


def _filled(series: pd.Series, meta: Mapping[str, Any], column: str) -> list[Any]:
    cells = list(series.to_numpy(object))
    missing = missing_mask(cells)
    if not missing.any():
        return cells
    strategy = meta.get("missing_value_strategy") or "bfill"
    if strategy == "fill_with_const":
        constant = Constant(meta.get("fill_value") or 128.0)
        return [constant if m else c for c, m in zip(cells, missing, strict=True)]
    if strategy == "fill_with_mode" and meta.get("fill_value") is not None:
        return [meta["fill_value"] if m else c for c, m in zip(cells, missing, strict=True)]
    if missing.all():
        raise DataError(
            f"image column {column!r}: every row is missing its image, nothing to fill them from "
            f"({strategy}); give images or use missing_value_strategy: fill_with_const"
        )
    positions = pd.Series(np.where(missing, np.nan, np.arange(len(cells), dtype=float)))
    primary = positions.bfill() if strategy != "ffill" else positions.ffill()
    source = primary.ffill() if strategy != "ffill" else primary.bfill()  # the edges
    return [cells[int(i)] for i in source.to_numpy()]


def transform_image_feature(
    series: pd.Series, meta: Mapping[str, Any], column: str
) -> tuple[Decoded]:
    """The decoded images of ``series`` (rows in order); raises :class:`DataError`."""
    cells = _filled(series, meta, column)
    decoded = decode_cells(
        cells,
        list(series.index),
        geometry_of(meta),
        column=column,
        in_memory=bool(meta.get("in_memory", True)),
        processes=int(meta.get("num_processes") or 1),
    )
    return (decoded,)
