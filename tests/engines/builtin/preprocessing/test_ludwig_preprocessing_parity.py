"""The built-in engine fits the preprocessing Ludwig 0.11 fits, from one config and one table.

Number normalisation with missing cells (Ludwig fills them first, then fits the statistics on
the filled column), category vocabularies with missing cells (the fill value is counted as a
value), and which of two unconventional binary labels is true. Both fit on every row of the
table (the built-in engine fits on every split's rows, as Ludwig does). Runs in the Ludwig
env (``scripts/ci/test_ludwig.sh``).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.ludwig
pytest.importorskip("ludwig", reason="needs the Ludwig env (scripts/setup/ludwig_env.sh)")

import yaml  # noqa: E402

from ludwig_nb.config import load_config  # noqa: E402
from ludwig_nb.engines.builtin.preprocessing.pipeline import fit_preprocessing  # noqa: E402

ROWS = 120


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    number = rng.normal(200.0, 14.0, ROWS)
    number[[3, 17, 40, 77]] = np.nan
    colour = rng.choice(["red", "green", "blue"], size=ROWS).astype(object)
    colour[[5, 9, 60]] = None
    return pd.DataFrame(
        {
            "x": number,
            "colour": colour,
            "y": rng.choice(["a", "b", "c"], size=ROWS),
            "split": np.zeros(ROWS, dtype=int),
        }
    )


def _fitted(number_prep: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Ludwig's metadata, the built-in engine's) for one number and one category input."""
    from ludwig.api import LudwigModel

    config = {
        "input_features": [
            {"name": "x", "type": "number", "preprocessing": number_prep},
            {"name": "colour", "type": "category"},
        ],
        "output_features": [{"name": "y", "type": "category"}],
        "preprocessing": {"split": {"type": "fixed", "column": "split"}},
    }
    frame = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ludwig = LudwigModel(config, backend="local", logging_level=logging.ERROR)
        theirs = ludwig.preprocess(dataset=frame, skip_save_processed_input=True)
    ours = fit_preprocessing(load_config(yaml.safe_dump(config)).to_dict(), frame)
    return theirs.training_set_metadata, ours["features"]


@pytest.mark.parametrize(
    "prep",
    [
        {"normalization": "zscore"},
        {"normalization": "zscore", "fill_value": 150.0},
        {"normalization": "zscore", "missing_value_strategy": "fill_with_mean"},
        {"normalization": "zscore", "missing_value_strategy": "bfill"},
        {"normalization": "minmax"},
        {"normalization": "iq"},
    ],
)
def test_number_statistics_are_ludwigs(prep: dict[str, Any]) -> None:
    theirs, ours = _fitted(prep)
    mine, other = ours["x"], theirs["x"]
    if prep["normalization"] == "zscore":
        assert mine["mean"] == pytest.approx(float(other["mean"]), rel=1e-5)
        assert mine["std"] == pytest.approx(float(other["std"]), rel=1e-5)
    elif prep["normalization"] == "minmax":
        assert mine["min"] == pytest.approx(float(other["min"]), rel=1e-5)
        assert mine["max"] == pytest.approx(float(other["max"]), rel=1e-5)
    else:
        assert mine["q2"] == pytest.approx(float(other["q2"]), rel=1e-5)
        assert mine["iqr"] == pytest.approx(float(other["q3"]) - float(other["q1"]), rel=1e-5)


def test_a_filled_category_counts_its_fill_value() -> None:
    theirs, ours = _fitted({"normalization": "zscore"})
    assert ours["colour"]["idx2str"] == list(theirs["colour"]["idx2str"])
    assert "<UNK>" in ours["colour"]["idx2str"]


def test_two_unconventional_binary_labels_map_as_ludwig_maps_them() -> None:
    from ludwig.api import LudwigModel

    from ludwig_nb.data.values import fit_binary

    frame = _frame().assign(sex=np.where(np.arange(ROWS) % 3, "Male", "Female"))
    config = {
        "input_features": [{"name": "sex", "type": "binary"}],
        "output_features": [{"name": "y", "type": "category"}],
        "preprocessing": {"split": {"type": "fixed", "column": "split"}},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ludwig = LudwigModel(config, backend="local", logging_level=logging.ERROR)
        theirs = ludwig.preprocess(dataset=frame, skip_save_processed_input=True)
    ours = fit_binary(frame["sex"], {}, "sex", say=False)
    assert ours["str2bool"] == theirs.training_set_metadata["sex"]["str2bool"]
    assert ours["bool2str"] == theirs.training_set_metadata["sex"]["bool2str"]
