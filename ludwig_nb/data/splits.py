"""Train / validation / test splits per Ludwig's ``preprocessing.split`` and ``sample_ratio``.

Supported split types: ``random`` (default, probabilities ``[0.7, 0.1, 0.2]``), ``fixed``
(a column holding 0/1/2 or training/validation/test) and ``stratify`` (random within each
value of a column). All are deterministic for a given seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.sources import SPLIT_NAMES

__all__ = ["SPLIT_NAMES", "sample_rows", "split_dataset", "split_rows"]


_DEFAULT_PROBABILITIES = (0.7, 0.1, 0.2)
_FIXED_VALUES = {
    "0": "training",
    "train": "training",
    "training": "training",
    "1": "validation",
    "val": "validation",
    "valid": "validation",
    "validation": "validation",
    "2": "test",
    "test": "test",
}


def sample_rows(frame: pd.DataFrame, preprocessing: Mapping[str, Any], seed: int) -> pd.DataFrame:
    """Apply ``sample_ratio`` (fraction in (0, 1]) or ``sample_size`` (rows), seeded."""
    ratio = preprocessing.get("sample_ratio")
    size = preprocessing.get("sample_size")
    if size is not None and int(size) < len(frame):
        return frame.sample(n=int(size), random_state=seed)
    if ratio is not None and float(ratio) < 1.0:
        return frame.sample(frac=float(ratio), random_state=seed)
    return frame


def _counts(n: int, probabilities: tuple[float, float, float]) -> tuple[int, int]:
    n_train = round(probabilities[0] * n)
    n_val = min(n - n_train, round(probabilities[1] * n))
    return n_train, n_val


def _assign_random(n: int, probabilities: tuple[float, float, float], seed: int) -> np.ndarray:
    """Split labels 0/1/2 per row: exact counts, random order."""
    n_train, n_val = _counts(n, probabilities)
    labels = np.full(n, 2, dtype=np.int8)
    order = np.random.default_rng(seed).permutation(n)
    labels[order[:n_train]] = 0
    labels[order[n_train : n_train + n_val]] = 1
    return labels


def _assign_stratified(
    values: pd.Series, probabilities: tuple[float, float, float], seed: int
) -> np.ndarray:
    labels = np.full(len(values), 2, dtype=np.int8)
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    for k in range(int(codes.max()) + 1 if len(codes) else 0):
        where = np.flatnonzero(codes == k)
        labels[where] = _assign_random(len(where), probabilities, seed + k)
    return labels


def _assign_fixed(values: pd.Series, column: str) -> np.ndarray:
    names = values.astype(str).str.strip().str.lower()
    mapped = names.map(_FIXED_VALUES)
    bad = mapped.isna()
    if bad.any():
        rows = ", ".join(str(i) for i in values.index[bad][:5])
        raise DataError(
            f"split column {column!r}: values must be 0/1/2 or training/validation/test "
            f"(bad rows: {rows})"
        )
    order = {name: i for i, name in enumerate(SPLIT_NAMES)}
    return mapped.map(order).to_numpy(dtype=np.int8)


def _probabilities(split: Mapping[str, Any]) -> tuple[float, float, float]:
    probs = tuple(float(p) for p in (split.get("probabilities") or _DEFAULT_PROBABILITIES))
    if len(probs) != 3 or any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-6:
        raise DataError(f"split probabilities must be 3 non-negative numbers summing to 1: {probs}")
    return probs[0], probs[1], probs[2]


def split_rows(
    frame: pd.DataFrame, preprocessing: Mapping[str, Any], seed: int
) -> dict[str, np.ndarray]:
    """Row positions of each split in ``frame``.

    Keys ``"training"``, ``"validation"``, ``"test"`` (absent splits omitted), positions in frame
    order; ``sample_ratio`` / ``sample_size`` are not applied here.

    Raises :class:`DataError` for an unsupported split type, a bad split column, or a
    split whose probability is > 0 but which would be left empty.
    """
    split = dict(preprocessing.get("split") or {})
    kind = split.get("type", "random")
    if kind == "random":
        probs = _probabilities(split)
        labels = _assign_random(len(frame), probs, seed)
    elif kind == "stratify":
        probs = _probabilities(split)
        labels = _assign_stratified(frame[str(split["column"])], probs, seed)
    elif kind == "fixed":
        probs = (1.0, 1.0, 1.0)  # whatever the column says; empty non-training splits allowed
        by = str(split.get("column", "split"))
        labels = _assign_fixed(frame[by], by)
    else:
        raise DataError(f"split type {kind!r} is not supported by the built-in engine")
    out: dict[str, np.ndarray] = {}
    for i, name in enumerate(SPLIT_NAMES):
        rows = np.flatnonzero(labels == i)
        if len(rows) == 0 and (i == 0 or (kind != "fixed" and probs[i] > 0)):
            raise DataError(
                f"the {name} split is empty ({len(frame)} rows, probability {probs[i]}); "
                "give more rows or change preprocessing.split.probabilities"
            )
        if len(rows):
            out[name] = rows
    return out


def split_dataset(
    frame: pd.DataFrame, preprocessing: Mapping[str, Any], seed: int
) -> dict[str, pd.DataFrame]:
    """Split one table into training, validation and test frames.

    Keys ``"training"``, ``"validation"``, ``"test"`` (absent splits omitted), after
    ``sample_ratio`` / ``sample_size``. Raises as :func:`split_rows`.
    """
    frame = sample_rows(frame, preprocessing, seed)
    return {
        name: frame.iloc[rows].reset_index(drop=True)
        for name, rows in split_rows(frame, preprocessing, seed).items()
    }
