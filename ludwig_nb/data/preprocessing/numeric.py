"""Number and binary features: parsing, normalisation and the true/false mapping."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.number_scale import denormalize
from ludwig_nb.data.preprocessing.missing import apply_fill, fit_fill, is_missing

__all__ = [
    "BINARY_PAIRS",
    "denormalize",
    "fit_binary",
    "fit_number",
    "parse_numbers",
    "transform_binary",
    "transform_number",
]

log = logging.getLogger(__name__)

#: Strings Ludwig reads as booleans (lower-cased): true spellings, false spellings.
BINARY_PAIRS = (
    frozenset({"true", "t", "yes", "y", "1", "1.0", "on"}),
    frozenset({"false", "f", "no", "n", "0", "0.0", "off"}),
)


def parse_numbers(series: pd.Series, column: str) -> pd.Series:
    """Float values with missing cells as NaN.

    Raises :class:`DataError` naming the rows that hold text that is neither a number nor a
    missing-value token.
    """
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return _finite(series.astype(float), column)
    missing = is_missing(series)
    values = pd.to_numeric(series.where(~missing, other=None), errors="coerce")
    bad = values.isna().to_numpy() & ~missing
    if bad.any():
        rows = series.index[bad][:5]
        shown = ", ".join(f"row {i}: {series.loc[i]!r}" for i in rows)
        more = f" and {int(bad.sum()) - len(rows)} more" if bad.sum() > len(rows) else ""
        raise DataError(f"number column {column!r} has non-numeric values ({shown}{more})")
    return _finite(values.astype(float), column)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _finite(values: pd.Series, column: str) -> pd.Series:
    """Return ``values`` if every one fits float32; raise ``DataError`` otherwise.

    The error names the rows that hold +-inf or a number too large for float32 (the tensors train in
    float32, where it would become inf); NaN is missing.
    """
    raw = values.to_numpy()
    for bad, what in (
        (np.isinf(raw), "infinite value"),
        (np.isfinite(raw) & (np.abs(raw) > _FLOAT32_MAX), "value too large for float32"),
    ):
        if bad.any():
            count = int(bad.sum())
            rows = ", ".join(f"row {i}: {values.loc[i]}" for i in values.index[bad][:5])
            raise DataError(
                f"number column {column!r} has {count} {what}{'s' if count > 1 else ''} "
                f"({rows}); replace or drop them (e.g. df[{column!r}].replace([np.inf, "
                "-np.inf], np.nan) to treat infinities as missing)"
            )
    return values


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
    """Metadata for a number feature: fill value and normalisation parameters."""
    values = parse_numbers(series, column)
    present = values.dropna().to_numpy(dtype=float)
    mean = float(present.mean()) if present.size else 0.0
    fill = fit_fill(values, preprocessing, mean=mean)
    method = preprocessing.get("normalization")
    return {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_const"),
        "fill_value": None if fill is None else float(fill),
        "normalization": method,
        **_normalisation(present if present.size else np.zeros(1), method, column),
    }


def transform_number(series: pd.Series, meta: Mapping[str, Any], column: str) -> np.ndarray:
    """float32 ``[rows]``: filled then normalised."""
    values = parse_numbers(series, column)
    values = apply_fill(values, meta["missing_value_strategy"], meta["fill_value"])
    array = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    array = np.nan_to_num(array, nan=0.0)
    method = meta.get("normalization")
    if method == "zscore":
        array = (array - meta["mean"]) / meta["std"]
    elif method == "minmax":
        array = (array - meta["min"]) / (meta["max"] - meta["min"])
    elif method == "iq":
        array = (array - meta["q2"]) / meta["iqr"]
    elif method == "log1p":
        array = np.log1p(np.maximum(array, -1 + 1e-7))
    result: np.ndarray = array.astype(np.float32)
    return result


def _labels(values: pd.Series) -> list[str]:
    """Distinct spellings, most frequent first (ties alphabetical)."""
    counts = Counter(str(v) for v in values)
    return sorted(counts, key=lambda v: (-counts[v], v))


def fit_binary(series: pd.Series, preprocessing: Mapping[str, Any], column: str) -> dict[str, Any]:
    """Metadata for a binary feature: ``str2bool`` mapping and ``bool2str`` labels."""
    missing = is_missing(series)
    present = series[~missing]
    fill = fit_fill(series, preprocessing)
    meta: dict[str, Any] = {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_false"),
        "fill_value": fill,
    }
    if pd.api.types.is_bool_dtype(present) or pd.api.types.is_numeric_dtype(present):
        distinct = set(pd.unique(present.astype(float)))
        if not distinct <= {0.0, 1.0}:
            raise DataError(f"binary column {column!r} holds numbers other than 0 and 1")
        return {**meta, "str2bool": None, "bool2str": None}
    labels = _labels(present)
    lowered = {label.strip().lower() for label in labels}
    true_label = preprocessing.get("fallback_true_label")
    if lowered <= BINARY_PAIRS[0] | BINARY_PAIRS[1] and true_label is None:
        mapping = {label: label.strip().lower() in BINARY_PAIRS[0] for label in labels}
    else:
        if len(labels) > 2:
            shown = ", ".join(map(repr, labels[:5]))
            raise DataError(f"binary column {column!r} has more than two values ({shown}, ...)")
        if true_label is None:
            true_label = sorted(labels)[-1]
            log.warning("binary column %r: %r taken as the true value", column, true_label)
        mapping = {label: label == str(true_label) for label in labels}
    false_labels = [k for k, v in mapping.items() if not v] or ["False"]
    true_labels = [k for k, v in mapping.items() if v] or [str(true_label or "True")]
    return {**meta, "str2bool": mapping, "bool2str": [false_labels[0], true_labels[0]]}


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
