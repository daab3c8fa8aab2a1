"""How Ludwig reads number and binary cells: numbers, the true/false spellings, the mapping.

Engine-neutral: the value checks before training (value_checks.py) and the built-in engine's
preprocessing (engines/builtin/preprocessing/numeric.py) read cells by the same rules.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.missing import fit_fill, is_missing

__all__ = ["BINARY_PAIRS", "fit_binary", "parse_numbers"]

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


def _labels(values: pd.Series) -> list[str]:
    """Distinct spellings, most frequent first (ties alphabetical)."""
    counts = Counter(str(v) for v in values)
    return sorted(counts, key=lambda v: (-counts[v], v))


def fit_binary(
    series: pd.Series, preprocessing: Mapping[str, Any], column: str, *, say: bool = True
) -> dict[str, Any]:
    """Metadata for a binary feature: ``str2bool`` mapping and ``bool2str`` labels.

    Two labels that are not a known true/false pair make the first one (sorted) the true
    value, as Ludwig 0.11 does ("Female" of "Female"/"Male"); ``say`` logs that choice and
    how to make another (the data check says it; the engine's preprocessing, which fits
    again, passes False: once per run).
    Raises ``DataError`` for numbers other than 0 and 1, or more than two labels.
    """
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
            true_label = sorted(labels)[0]
            if say:
                log.warning(
                    "binary column %r: %r taken as the true value (the first of its two "
                    "values, sorted, as Ludwig takes it); to choose, give its feature "
                    "preprocessing: "
                    "{fallback_true_label: <the true value>}",
                    column,
                    true_label,
                )
        mapping = {label: label == str(true_label) for label in labels}
    false_labels = [k for k, v in mapping.items() if not v] or ["False"]
    true_labels = [k for k, v in mapping.items() if v] or [str(true_label or "True")]
    return {**meta, "str2bool": mapping, "bool2str": [false_labels[0], true_labels[0]]}
