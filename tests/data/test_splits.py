"""Splits and sampling: proportions, determinism, stratification, fixed column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data import DataError, split_dataset


def _table(rows: int = 200) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(rows), "y": np.arange(rows) % 4 == 0})


def test_random_split_has_the_asked_sizes_and_is_seeded():
    parts = split_dataset(_table(), {}, seed=1)
    assert [len(parts[k]) for k in ("training", "validation", "test")] == [140, 20, 40]
    again = split_dataset(_table(), {}, seed=1)
    assert parts["test"]["x"].tolist() == again["test"]["x"].tolist()
    other = split_dataset(_table(), {}, seed=2)
    assert parts["test"]["x"].tolist() != other["test"]["x"].tolist()
    everything = pd.concat(parts.values())["x"].sort_values().tolist()
    assert everything == list(range(200))


def test_stratified_split_keeps_class_shares():
    split = {"type": "stratify", "column": "y", "probabilities": [0.5, 0.25, 0.25]}
    parts = split_dataset(_table(), {"split": split}, seed=0)
    for part in parts.values():
        assert part["y"].mean() == pytest.approx(0.25, abs=0.03)


def test_fixed_split_by_column_and_bad_values():
    frame = _table(6).assign(split=[0, 0, 1, 2, "train", "test"])
    parts = split_dataset(frame, {"split": {"type": "fixed", "column": "split"}}, seed=0)
    assert [len(parts[k]) for k in ("training", "validation", "test")] == [3, 1, 2]
    frame.loc[2, "split"] = "holdout"
    with pytest.raises(DataError, match="bad rows: 2"):
        split_dataset(frame, {"split": {"type": "fixed", "column": "split"}}, seed=0)


def test_sample_ratio_and_empty_split():
    parts = split_dataset(_table(), {"sample_ratio": 0.5}, seed=0)
    assert sum(len(p) for p in parts.values()) == 100
    with pytest.raises(DataError, match="the validation split is empty"):
        split_dataset(_table(4), {}, seed=0)


def test_bad_probabilities():
    with pytest.raises(DataError, match="summing to 1"):
        split_dataset(_table(), {"split": {"probabilities": [0.5, 0.1, 0.1]}}, seed=0)
