"""Missing-value detection and fill strategies."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.data.missing import apply_fill, fit_fill, is_missing


def test_missing_tokens_and_nan():
    series = pd.Series(["a", "", " NA ", None, "?", "b"])
    assert is_missing(series).tolist() == [False, True, True, True, True, False]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("bfill", ["a", "b", "b"]), ("ffill", ["a", "a", "b"])],
)
def test_neighbour_fills(strategy, expected):
    assert apply_fill(pd.Series(["a", None, "b"]), strategy, None).tolist() == expected


def test_mode_and_const():
    series = pd.Series(["x", "y", "y", None])
    assert fit_fill(series, {"missing_value_strategy": "fill_with_mode"}) == "y"
    assert apply_fill(series, "fill_with_const", "z").tolist() == ["x", "y", "y", "z"]
    with pytest.raises(DataError, match="unknown missing_value_strategy"):
        fit_fill(series, {"missing_value_strategy": "guess"})
