"""Data checks that run before any thread: duplicate columns, leaks, empty inputs, classes."""

import warnings

import pandas as pd
import pytest

from ludwig_nb.data.errors import DataError, DataWarning
from ludwig_nb.data.value_checks import check_column_names, warn_surprises


def test_a_column_name_used_twice_is_refused_with_its_count():
    frame = pd.DataFrame([[1, 2, 3]], columns=["a", "a", "b"])
    with pytest.raises(DataError, match=r"train.csv: duplicate column names 'a' \(2 times\)"):
        check_column_names(frame, "train.csv")
    numbered = check_column_names(pd.DataFrame([[1, 2]], columns=[0, 1]), "df")
    assert list(numbered.columns) == ["0", "1"]  # a config names columns as text


def test_an_input_that_is_the_output_warns_of_a_leak_and_an_empty_input_warns_too():
    config = {
        "input_features": [
            {"name": "x", "type": "number"},
            {"name": "y", "type": "binary"},
            {"name": "blank", "type": "number"},
        ],
        "output_features": [{"name": "y", "type": "binary"}],
    }
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1], "blank": [None, None]})
    with pytest.warns(DataWarning) as caught:
        messages = warn_surprises(config, frame, "df")
    assert len(messages) == len(caught) == 2
    assert "input 'y' reads column 'y', which is also an output" in messages[0]
    assert "input column 'blank' has no values (all 2 rows missing)" in messages[1]


def test_a_clean_config_warns_of_nothing():
    config = {
        "input_features": [{"name": "x", "type": "number"}],
        "output_features": [{"name": "y", "type": "binary"}],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_surprises(config, pd.DataFrame({"x": [1.0], "y": [1]}), "df") == []
