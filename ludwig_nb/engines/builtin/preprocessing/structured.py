"""Vector and date features."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.missing import is_missing

__all__ = ["DATE_PARTS", "fit_date", "fit_vector", "transform_date", "transform_vector"]

#: The components a date becomes: year, month (1-12), day (1-31), weekday (0-6),
#: day of year (1-366), hour, minute, second, second of the day.
DATE_PARTS = ("year", "month", "day", "weekday", "yearday", "hour", "minute", "second", "daysec")


def _parse_vector(value: Any) -> list[float] | None:
    if isinstance(value, list | tuple | np.ndarray):
        return [float(v) for v in value]
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip().strip("[]").replace(",", " ")
    return [float(v) for v in text.split()] if text else None


def fit_vector(series: pd.Series, preprocessing: Mapping[str, Any], column: str) -> dict[str, Any]:
    """Metadata for a vector feature: ``vector_size`` (from the config or the first row)."""
    size = preprocessing.get("vector_size")
    if size is None:
        first = next((v for v in map(_parse_vector, series) if v is not None), None)
        if first is None:
            raise DataError(f"vector column {column!r} has no values")
        size = len(first)
    return {"vector_size": int(size)}


def transform_vector(series: pd.Series, meta: Mapping[str, Any], column: str) -> np.ndarray:
    """float32 ``[rows, vector_size]``.

    Missing rows are zeros; raises :class:`DataError` for unparsable rows or rows of another length.
    """
    size = int(meta["vector_size"])
    out = np.zeros((len(series), size), dtype=np.float32)
    for row, (label, value) in enumerate(series.items()):
        try:
            parsed = _parse_vector(value)
        except ValueError:
            raise DataError(f"vector column {column!r}, row {label}: not numbers") from None
        if parsed is None:
            continue
        if len(parsed) != size:
            raise DataError(
                f"vector column {column!r}, row {label}: {len(parsed)} values, expected {size}"
            )
        out[row] = parsed
    return out


def _parse_dates(series: pd.Series, fmt: str | None, column: str) -> pd.Series:
    missing = is_missing(series)
    values = series.where(~missing, other=None)
    parsed = pd.to_datetime(values, format=fmt or "mixed", errors="coerce")
    bad = parsed.isna().to_numpy() & ~missing
    if bad.any():
        rows = ", ".join(f"row {i}: {series.loc[i]!r}" for i in series.index[bad][:5])
        raise DataError(f"date column {column!r} has values that are not dates ({rows})")
    return parsed


def fit_date(series: pd.Series, preprocessing: Mapping[str, Any], column: str) -> dict[str, Any]:
    """Metadata for a date feature: format and the fill date (median of training)."""
    fmt = preprocessing.get("datetime_format")
    parsed = _parse_dates(series, fmt, column).dropna()
    fill = parsed.sort_values().iloc[len(parsed) // 2] if len(parsed) else pd.Timestamp(0)
    years = parsed.dt.year if len(parsed) else pd.Series([1970])
    return {
        "datetime_format": fmt,
        "fill_value": fill.isoformat(),
        "min_year": int(years.min()),
        "max_year": int(years.max()),
    }


def transform_date(series: pd.Series, meta: Mapping[str, Any], column: str) -> np.ndarray:
    """int64 ``[rows, 9]`` date parts (:data:`DATE_PARTS`); missing -> the fill date."""
    parsed = _parse_dates(series, meta["datetime_format"], column)
    parsed = parsed.fillna(pd.Timestamp(meta["fill_value"]))
    dt = parsed.dt
    parts = [
        dt.year,
        dt.month,
        dt.day,
        dt.day_of_week,
        dt.day_of_year,
        dt.hour,
        dt.minute,
        dt.second,
        dt.hour * 3600 + dt.minute * 60 + dt.second,
    ]
    return np.stack([p.to_numpy(dtype=np.int64) for p in parts], axis=1)
