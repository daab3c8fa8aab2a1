"""Missing values: which cells count as missing, and Ludwig's fill strategies.

Strategies (``preprocessing.missing_value_strategy``): ``fill_with_const`` (``fill_value``),
``fill_with_mode``, ``fill_with_mean`` (numbers), ``fill_with_false`` (binary), ``bfill``,
``ffill`` and ``drop_row`` (handled by the pipeline before any transform). The fill value is
computed on the training split and saved in the metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError

__all__ = ["MISSING_TOKENS", "STRATEGIES", "apply_fill", "fit_fill", "is_missing"]

STRATEGIES = (
    "fill_with_const",
    "fill_with_mode",
    "fill_with_mean",
    "fill_with_false",
    "bfill",
    "ffill",
    "drop_row",
)

#: Text cells read as missing (besides NaN/None), as CSV writers spell them.
MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "null", "none", "?"})


def is_missing(series: pd.Series) -> np.ndarray:
    """Boolean mask of missing cells: NaN/None, or a blank/NA-like string."""
    mask = series.isna().to_numpy().copy()
    if series.dtype == object or isinstance(series.dtype, pd.StringDtype):
        text = series.astype(str).str.strip().str.lower()
        mask |= text.isin(MISSING_TOKENS).to_numpy()
    return mask


def fit_fill(series: pd.Series, preprocessing: Mapping[str, Any], mean: float | None = None) -> Any:
    """The value that fills missing cells, from the training split (JSON-serialisable)."""
    strategy = preprocessing.get("missing_value_strategy") or "fill_with_const"
    if strategy not in STRATEGIES:
        raise DataError(f"unknown missing_value_strategy {strategy!r}")
    present = series[~is_missing(series)]
    if strategy == "fill_with_mode":
        return None if present.empty else _plain(present.mode().iloc[0])
    if strategy == "fill_with_mean":
        if mean is None:
            raise DataError("fill_with_mean applies to number features only")
        return mean
    if strategy == "fill_with_false":
        return False
    return _plain(preprocessing.get("fill_value"))


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def apply_fill(series: pd.Series, strategy: str, fill_value: Any) -> pd.Series:
    """Fill the missing cells of ``series``; ``drop_row`` is the caller's job."""
    mask = is_missing(series)
    if not mask.any():
        return series
    series = series.where(~mask, other=None) if series.dtype == object else series.copy()
    if series.dtype != object:
        series[mask] = np.nan
    if strategy in ("bfill", "ffill"):
        filled = series.bfill() if strategy == "bfill" else series.ffill()
        # the edge that has no neighbour falls back to the other direction
        return filled.ffill() if strategy == "bfill" else filled.bfill()
    if fill_value is None:
        return series
    return series.astype(object).where(~mask, other=fill_value)
