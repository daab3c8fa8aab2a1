"""Number and binary features: normalisation and the true/false transform.

How a number or binary cell reads (parsing, the true/false spellings, a binary column's
mapping) is the data layer's (``ludwig_nb.data.values``), shared with the value checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.missing import apply_fill, fit_fill
from ludwig_nb.data.values import BINARY_PAIRS, parse_numbers

__all__ = ["fit_number", "transform_binary", "transform_number"]


def _normalisation(values: np.ndarray, method: str | None, column: str) -> dict[str, float]:
    if method in (None, "null", "none"):
        return {}
    if method == "zscore":
        # the sample standard deviation (ddof 1), as Ludwig's (pandas') std
        std = float(values.std(ddof=1)) if values.size > 1 else 0.0
        std = std or 1.0
        return {"mean": float(values.mean()), "std": std}
    if method == "minmax":
        low, high = float(values.min()), float(values.max())
        return {"min": low, "max": high if high > low else low + 1.0}
    if method == "iq":
        q1, q2, q3 = (float(q) for q in np.quantile(values, [0.25, 0.5, 0.75]))
        return {"q2": q2, "iqr": (q3 - q1) or 1.0}
    if method == "log1p":
        if values.size and values.min() <= -1:
            raise DataError(f"number column {column!r}: log1p needs values > -1")
        return {}
    raise DataError(f"number column {column!r}: unknown normalization {method!r}")


def fit_number(series: pd.Series, preprocessing: Mapping[str, Any], column: str) -> dict[str, Any]:
    """Metadata for a number feature: fill value and normalisation parameters.

    The normalisation is fitted on the column as filled, as Ludwig fits it: with the default
    ``fill_with_const`` 0, the filled zeros count in the mean and standard deviation (and the
    minimum, the quartiles), so the same config scales the values as Ludwig does.
    Raises ``DataError`` for cells that are not numbers or an unknown normalisation.
    """
    values = parse_numbers(series, column)
    present = values.dropna().to_numpy(dtype=float)
    mean = float(present.mean()) if present.size else 0.0
    fill = fit_fill(values, preprocessing, mean=mean)
    strategy = preprocessing.get("missing_value_strategy", "fill_with_const")
    filled = pd.to_numeric(apply_fill(values, strategy, fill), errors="coerce").dropna()
    fitted = filled.to_numpy(dtype=float)
    method = preprocessing.get("normalization")
    return {
        "missing_value_strategy": strategy,
        "fill_value": None if fill is None else float(fill),
        "normalization": method,
        **_normalisation(fitted if fitted.size else np.zeros(1), method, column),
    }


def transform_number(series: pd.Series, meta: Mapping[str, Any], column: str) -> np.ndarray:
    """float32 ``[rows]``: filled then normalised."""
    values = parse_numbers(series, column)
    values = apply_fill(values, meta["missing_value_strategy"], meta["fill_value"])
    array = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    # float32 from here, as Ludwig casts the column before it normalises (the same bits)
    array = np.nan_to_num(array, nan=0.0).astype(np.float32)
    method, f32 = meta.get("normalization"), np.float32
    if method == "zscore":
        array = (array - f32(meta["mean"])) / f32(meta["std"])
    elif method == "minmax":
        array = (array - f32(meta["min"])) / f32(meta["max"] - meta["min"])
    elif method == "iq":
        array = (array - f32(meta["q2"])) / f32(meta["iqr"])
    elif method == "log1p":
        array = np.log1p(np.maximum(array, f32(-1 + 1e-7)))
    result: np.ndarray = array.astype(np.float32, copy=False)
    return result


def transform_binary(series: pd.Series, meta: Mapping[str, Any], column: str) -> np.ndarray:
    """float32 ``[rows]`` of 0/1; unseen strings raise :class:`DataError`."""
    filled = apply_fill(series, meta["missing_value_strategy"], meta["fill_value"])
    mapping = meta.get("str2bool")
    if mapping is None and (filled.dtype == bool or pd.api.types.is_numeric_dtype(filled)):
        # bools and numbers: what _as_bool_number's float() gives, without a call per row
        values = pd.Series(filled.to_numpy(dtype=np.float64, na_value=np.nan), index=filled.index)
    elif mapping is None:
        values = pd.to_numeric(filled.map(_as_bool_number), errors="coerce")
    else:
        as_text = filled.map(lambda v: v if isinstance(v, bool) else str(v))
        values = as_text.map(lambda v: float(v) if isinstance(v, bool) else mapping.get(v))
        values = pd.to_numeric(values, errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        rows = ", ".join(f"row {i}: {series.loc[i]!r}" for i in series.index[bad][:5])
        raise DataError(f"binary column {column!r}: values not seen in training ({rows})")
    return values.to_numpy(dtype=np.float32)


def _as_bool_number(value: Any) -> Any:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in BINARY_PAIRS[0]:
            return 1.0
        if low in BINARY_PAIRS[1]:
            return 0.0
        return None
    return None if value is None else float(value)
