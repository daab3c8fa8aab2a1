"""Fitting on the training split, applying the saved metadata, drop_row."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin.preprocessing.pipeline import (
    drop_missing_rows,
    fit_preprocessing,
    transform_frame,
)


def test_metadata_is_json_and_applies_the_same_transforms(frame, config):
    meta = fit_preprocessing(config, frame.iloc[:6])
    again = json.loads(json.dumps(meta))
    a = transform_frame(meta, frame)
    b = transform_frame(again, frame)
    assert set(a) == {"age", "city", "member", "label"}
    for name in a:
        assert np.array_equal(a[name][0], b[name][0])


def test_statistics_come_from_training_rows_only(frame, config):
    config["input_features"][0]["preprocessing"] = {"normalization": "zscore"}
    meta = fit_preprocessing(config, frame.iloc[:2])  # ages 22 and 35
    assert meta["features"]["age"]["mean"] == pytest.approx(28.5)
    assert meta["features"]["age"]["std"] == pytest.approx(9.192388)  # ddof 1, as Ludwig
    assert meta["features"]["city"]["idx2str"] == ["a", "b"]


def test_outputs_are_left_out_for_prediction(frame, config):
    meta = fit_preprocessing(config, frame)
    assert "label" not in transform_frame(meta, frame.drop(columns=["label"]), outputs=False)
    with pytest.raises(DataError, match="column 'label'"):
        transform_frame(meta, frame.drop(columns=["label"]))


def test_drop_row_strategy(frame, config):
    config["input_features"][1]["preprocessing"] = {"missing_value_strategy": "drop_row"}
    assert len(drop_missing_rows(config, frame)) == 9


def test_unsupported_feature_type(frame, config):
    config["input_features"][0]["type"] = "image"
    with pytest.raises(DataError, match="'image' is not supported"):
        fit_preprocessing(config, frame)
