"""Number normalisation (filled cells counted) and binary mapping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.data.values import fit_binary
from ludwig_nb.engines.builtin.preprocessing.number_scale import denormalize
from ludwig_nb.engines.builtin.preprocessing.numeric import (
    fit_number,
    transform_binary,
    transform_number,
)

TRAIN = pd.Series([1.0, 2.0, 3.0, 4.0, None], name="n")


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("zscore", (np.array([10.0]) - 2.5) / np.std([1, 2, 3, 4], ddof=1)),
        ("minmax", (np.array([10.0]) - 1) / 3),
        ("iq", (np.array([10.0]) - 2.5) / 1.5),
        ("log1p", np.log1p([10.0])),
        (None, np.array([10.0])),
    ],
)
def test_normalisation_uses_training_statistics(method, expected):
    meta = fit_number(TRAIN, {"normalization": method}, "n")
    got = transform_number(pd.Series([10.0]), meta, "n")
    assert got == pytest.approx(expected.astype(np.float32), rel=1e-5)
    assert denormalize(got.astype(np.float64), meta) == pytest.approx([10.0], rel=1e-5)


def test_a_constant_column_trains_as_a_constant_zero_where_ludwig_refuses():
    """Ludwig 0.11 refuses to z-score a column with a standard deviation of 0 (digits' border
    pixels); the built-in engine keeps it as a constant 0 input (docs/guide/ludwig_parity.md)."""
    constant = pd.Series([3.0] * 5)
    meta = fit_number(constant, {"normalization": "zscore"}, "pixel_0_0")
    assert meta["std"] == 1.0
    assert np.array_equal(transform_number(constant, meta, "pixel_0_0"), np.zeros(5))


def test_missing_numbers_fill_with_const_or_mean():
    const = fit_number(TRAIN, {"fill_value": 7.0, "normalization": None}, "n")
    assert transform_number(TRAIN, const, "n")[-1] == 7.0
    mean = fit_number(TRAIN, {"missing_value_strategy": "fill_with_mean"}, "n")
    assert transform_number(TRAIN, mean, "n")[-1] == pytest.approx(2.5)


@pytest.mark.parametrize(
    ("prep", "counted"),
    [
        ({"fill_value": 0.0}, [1.0, 2.0, 3.0, 4.0, 0.0]),
        ({"missing_value_strategy": "fill_with_mean"}, [1.0, 2.0, 3.0, 4.0, 2.5]),
        ({"missing_value_strategy": "bfill"}, [1.0, 2.0, 3.0, 4.0, 4.0]),
    ],
)
def test_normalisation_counts_the_filled_cells_as_ludwig_does(prep, counted):
    # Ludwig fills the missing cells, then fits the normalisation on the filled column
    meta = fit_number(TRAIN, {**prep, "normalization": "zscore"}, "n")
    assert meta["mean"] == pytest.approx(np.mean(counted))
    assert meta["std"] == pytest.approx(np.std(counted, ddof=1))
    minmax = fit_number(TRAIN, {**prep, "normalization": "minmax"}, "n")
    assert (minmax["min"], minmax["max"]) == (min(counted), max(counted))


def test_binary_strings_and_fallback_true_label():
    meta = fit_binary(pd.Series(["Yes", "no", "YES", "Yes"]), {}, "b")
    assert transform_binary(pd.Series(["no", "Yes"]), meta, "b").tolist() == [0.0, 1.0]
    assert meta["bool2str"] == ["no", "Yes"]
    fallback = fit_binary(pd.Series(["cat", "dog"]), {"fallback_true_label": "cat"}, "b")
    assert transform_binary(pd.Series(["dog", "cat"]), fallback, "b").tolist() == [0.0, 1.0]
    numbers = fit_binary(pd.Series([0, 1, 1]), {}, "b")
    assert transform_binary(pd.Series([1, 0]), numbers, "b").tolist() == [1.0, 0.0]


def test_binary_errors():
    with pytest.raises(DataError, match="more than two values"):
        fit_binary(pd.Series(["a", "b", "c"]), {}, "b")
    meta = fit_binary(pd.Series(["x", "y"]), {}, "b")
    with pytest.raises(DataError, match="not seen in training"):
        transform_binary(pd.Series(["z"]), meta, "b")
    with pytest.raises(DataError, match="log1p needs values > -1"):
        fit_number(pd.Series([-5.0, 1.0]), {"normalization": "log1p"}, "n")
