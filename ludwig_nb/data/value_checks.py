"""Checks on a table's columns and values that run before any thread starts.

Errors are :class:`DataError` (one line, naming the column and what to do). What trains
but probably not as the user meant (an input with no values, an input that reads the
target, a target with more classes than the vocabulary keeps) is a :class:`DataWarning`:
the run goes on and the warning is shown once.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ludwig_nb.data.errors import DataError, DataWarning
from ludwig_nb.data.missing import is_missing
from ludwig_nb.data.values import fit_binary, parse_numbers

__all__ = ["check_column_names", "check_values", "warn_surprises"]


def check_column_names(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """The frame with text column names (a config names columns as text: ``0`` is ``'0'``).

    Raises :class:`DataError` when two columns share a name (pandas then returns a frame
    for ``frame[name]``, and nothing downstream can tell which column is meant).
    """
    names = [str(c) for c in frame.columns]
    counts = Counter(names)
    repeated = [name for name, n in counts.items() if n > 1]
    if repeated:
        shown = ", ".join(f"{name!r} ({counts[name]} times)" for name in repeated[:5])
        raise DataError(
            f"{where}: duplicate column names {shown}; rename them so that each is unique "
            "(e.g. df.columns = [...] or df.loc[:, ~df.columns.duplicated()])"
        )
    if any(not isinstance(c, str) for c in frame.columns):
        return frame.rename(columns=str)
    return frame


def _column(feature: Mapping[str, Any]) -> str:
    return str(feature.get("column") or feature["name"])


def check_values(config: Mapping[str, Any], frame: pd.DataFrame) -> None:
    """Cheap value checks before training.

    Number columns parse and are finite, binary columns hold two values (raises :class:`DataError`).
    """
    for feature in [*(config.get("input_features") or []), *(config.get("output_features") or [])]:
        if feature["type"] == "number":
            parse_numbers(frame[_column(feature)], _column(feature))
        elif feature["type"] == "binary":
            prep = feature.get("preprocessing") or {}
            fit_binary(frame[_column(feature)], prep, _column(feature))


def warn_surprises(config: Mapping[str, Any], frame: pd.DataFrame, where: str) -> list[str]:
    """Warn (:class:`DataWarning`) about what trains silently but wrongly; returns the messages.

    ``frame`` is the training data (or the whole table before the split).
    """
    messages = []
    targets = {_column(f) for f in config.get("output_features") or []}
    for feature in config.get("input_features") or []:
        column = _column(feature)
        if column in targets:
            messages.append(
                f"{where}: input {feature['name']!r} reads column {column!r}, which is also "
                "an output: the model sees the answer (a leak); drop that input"
            )
        elif column in frame.columns and len(frame) and is_missing(frame[column]).all():
            messages.append(
                f"{where}: input column {column!r} has no values (all {len(frame)} rows "
                "missing): it cannot help the model; drop it or fix the data"
            )
    for feature in config.get("output_features") or []:
        message = _category_overflow(feature, frame, where)
        if message:
            messages.append(message)
    for message in messages:
        warnings.warn(message, DataWarning, stacklevel=3)
    return messages


def _category_overflow(feature: Mapping[str, Any], frame: pd.DataFrame, where: str) -> str:
    if feature.get("type") != "category" or _column(feature) not in frame.columns:
        return ""
    limit = (feature.get("preprocessing") or {}).get("most_common", 10000)
    series = frame[_column(feature)]
    counts = series[~is_missing(series)].astype(str).value_counts()
    if not isinstance(limit, int) or len(counts) <= limit:
        return ""
    dropped = int(counts.iloc[limit:].sum())
    share = 100.0 * dropped / max(1, int(counts.sum()))
    return (
        f"{where}: output {_column(feature)!r} has {len(counts)} classes but "
        f"preprocessing.most_common is {limit}: {dropped} rows ({share:.0f} %) of the "
        "other classes train as '<UNK>'; raise most_common to keep them"
    )
