"""How a number or binary cell reads: the rules the value checks and the preprocessing share."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.data.value_checks import check_values
from ludwig_nb.data.values import fit_binary, parse_numbers


def test_numbers_parse_with_missing_tokens_as_nan_and_bad_text_named_by_row():
    values = parse_numbers(pd.Series(["1.5", "", "NaN", 3]), "n")
    assert values.iloc[0] == 1.5 and values.iloc[1:3].isna().all() and values.iloc[3] == 3.0
    with pytest.raises(DataError, match=r"number column 'n' has non-numeric values \(row 1: 'x'"):
        parse_numbers(pd.Series(["1", "x"]), "n")


def test_an_infinite_or_float32_overflowing_number_is_refused_with_what_to_do():
    with pytest.raises(DataError, match=r"1 infinite value \(row 0: inf\).*replace\(\[np.inf"):
        parse_numbers(pd.Series([np.inf, 1.0]), "n")
    with pytest.raises(DataError, match="value too large for float32"):
        parse_numbers(pd.Series([1e300]), "n")


def test_a_binary_column_maps_ludwigs_spellings_and_names_its_labels():
    meta = fit_binary(pd.Series(["Yes", "no", "YES", "Yes", None]), {}, "b")
    assert meta["str2bool"] == {"Yes": True, "YES": True, "no": False}
    assert meta["bool2str"] == ["no", "Yes"]  # the most frequent spelling of each
    assert fit_binary(pd.Series([0, 1]), {}, "b")["str2bool"] is None
    with pytest.raises(DataError, match="numbers other than 0 and 1"):
        fit_binary(pd.Series([0, 2]), {}, "b")


def test_the_value_checks_read_number_and_binary_columns_by_these_rules(frame, config):
    check_values(config, frame)  # the fixture's table is clean
    frame.loc[3, "member"] = "maybe"
    with pytest.raises(DataError, match="binary column 'member' has more than two values"):
        check_values(config, frame)


def test_two_unconventional_labels_make_the_first_sorted_one_true_as_ludwig():
    meta = fit_binary(pd.Series(["Male", "Female", "Male"]), {}, "sex", say=False)
    assert meta["str2bool"] == {"Male": False, "Female": True}
    assert meta["bool2str"] == ["Male", "Female"]
