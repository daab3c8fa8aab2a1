from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.feature import (
    fit_image_feature,
    geometry_of,
    prepare_image_columns,
    transform_image_feature,
)
from ludwig_nb.engines.builtin.image.tables import fit_features, transform_features

META = {
    "height": 2,
    "width": 2,
    "num_channels": 1,
    "resize_method": "interpolate",
    "shorter_side": None,
    "in_memory": True,
    "num_processes": 1,
}


def _flat(value: int) -> np.ndarray:
    return np.full((2, 2), value, np.uint8)


def _decoded(cells, strategy, fill_value=None):
    meta = {**META, "missing_value_strategy": strategy, "fill_value": fill_value}
    (images,) = transform_image_feature(pd.Series(cells), meta, "img")
    return [int(image[0, 0, 0]) for image in images]


def test_bfill_and_ffill_take_the_neighbours_image_and_fall_back_at_the_edges():
    cells = [None, _flat(10), None, _flat(30), None]
    assert _decoded(cells, "bfill") == [10, 10, 30, 30, 30]
    assert _decoded(cells, "ffill") == [10, 10, 10, 30, 30]


def test_fill_with_const_is_a_flat_image_of_the_fill_value():
    assert _decoded([_flat(7), None], "fill_with_const", 128.0) == [7, 128]
    assert _decoded([_flat(7), ""], "fill_with_const", 3.0) == [7, 3]


def test_every_row_missing_is_a_data_error():
    with pytest.raises(DataError, match="every row is missing its image"):
        _decoded([None, None], "bfill")


def test_other_strategies_are_refused_with_the_ones_that_apply():
    series = pd.Series([_flat(1)], name="img")
    prep = {"missing_value_strategy": "fill_with_mean"}
    with pytest.raises(DataError, match="bfill, ffill, fill_with_mode"):
        fit_image_feature(series, {"preprocessing": prep})


def test_geometry_comes_from_the_metadata():
    geometry = geometry_of({**META, "resize_method": "crop_or_pad", "shorter_side": 3})
    assert (geometry.height, geometry.channels, geometry.resize_method, geometry.shorter_side) == (
        2,
        1,
        "crop_or_pad",
        3,
    )


def test_paths_resolve_per_split_against_their_own_files(tmp_path):
    config = {"input_features": [{"name": "img", "type": "image", "column": "img"}]}
    frames = {
        "training": pd.DataFrame({"img": ["a.png"]}),
        "test": pd.DataFrame({"img": ["b.png"]}),
    }
    sources = {
        "training": str(tmp_path / "t" / "train.csv"),
        "test": str(tmp_path / "u" / "test.csv"),
    }
    resolved = prepare_image_columns(config, frames, sources, check=False)
    assert resolved["training"]["img"][0] == str(tmp_path / "t" / "a.png")
    assert resolved["test"]["img"][0] == str(tmp_path / "u" / "b.png")
    assert frames["training"]["img"][0] == "a.png"  # the caller's frames unchanged


def test_tables_keep_the_feature_order_and_pass_the_rest_through():
    frame = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0], "img": [_flat(i) for i in (1, 2, 3)], "y": ["a", "b", "a"]}
    )
    config = {
        "input_features": [
            {"name": "x", "type": "number", "preprocessing": {}},
            {"name": "img", "type": "image", "preprocessing": {}, "encoder": {}},
        ],
        "output_features": [{"name": "y", "type": "category", "preprocessing": {}}],
    }
    metadata = fit_features(config, frame)
    assert list(metadata["features"]) == ["x", "img", "y"]
    assert metadata["features"]["img"]["role"] == "input" and metadata["version"] is not None
    arrays = transform_features(metadata, frame)
    assert list(arrays) == ["x", "img", "y"]
    assert arrays["img"][0].shape == (3, 1, 2, 2)
    assert list(transform_features(metadata, frame, outputs=False)) == ["x", "img"]
