"""Vector and date features."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin.preprocessing.structured import (
    fit_date,
    fit_vector,
    transform_date,
    transform_vector,
)


def test_vectors_parse_and_check_their_length():
    series = pd.Series(["1 2 3", "[4, 5, 6]", None])
    meta = fit_vector(series, {}, "v")
    assert meta["vector_size"] == 3
    assert transform_vector(series, meta, "v").tolist() == [[1, 2, 3], [4, 5, 6], [0, 0, 0]]
    with pytest.raises(DataError, match="row 0: 2 values, expected 3"):
        transform_vector(pd.Series(["1 2"]), meta, "v")


def test_dates_become_parts_and_missing_takes_the_median():
    series = pd.Series(["2020-03-15 10:30:00", "2021-01-01", None])
    meta = fit_date(series, {}, "d")
    parts = transform_date(series, meta, "d")
    assert parts[0].tolist() == [2020, 3, 15, 6, 75, 10, 30, 0, 37800]
    assert parts[2].tolist() == parts[1].tolist()  # median of two is the later one here
    with pytest.raises(DataError, match="not dates"):
        transform_date(pd.Series(["yesterday-ish"]), meta, "d")
