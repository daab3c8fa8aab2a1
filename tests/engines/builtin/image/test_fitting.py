from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.fitting import (
    IMAGENET_MEAN,
    fit_image,
    infer_channels,
    infer_size,
    standardization,
)

PREP = {
    "infer_image_dimensions": True,
    "infer_image_max_height": 256,
    "infer_image_max_width": 256,
    "infer_image_sample_size": 100,
    "infer_image_num_channels": True,
}


def test_size_is_the_rounded_mean_of_the_sample_capped():
    sample = [(10, 20, 3), (13, 30, 3)]
    assert infer_size(sample, PREP) == (12, 25)  # 11.5 rounds to even, as Ludwig's round
    assert infer_size(sample, {**PREP, "infer_image_max_width": 21}) == (12, 21)


def test_size_given_and_equal_dimensions():
    assert infer_size([(1, 1, 1)], {**PREP, "height": 30, "width": 40}) == (30, 40)
    square = {**PREP, "height": 30, "width": 40, "requires_equal_dimensions": True}
    assert infer_size([(1, 1, 1)], square) == (30, 30)
    assert infer_size([(5, 6, 1), (9, 9, 1)], {**PREP, "infer_image_dimensions": False}) == (5, 6)


def test_channels_follow_the_majority_else_three():
    assert infer_channels([(1, 1, 1)] * 3 + [(1, 1, 3)], PREP) == 1
    assert infer_channels([(1, 1, 4)] * 3 + [(1, 1, 3)], PREP) == 4
    assert infer_channels([(1, 1, 1), (1, 1, 4)], PREP) == 3
    assert infer_channels([(1, 1, 1)], {**PREP, "num_channels": 2}) == 2
    first = {**PREP, "infer_image_dimensions": False, "infer_image_num_channels": False}
    assert infer_channels([(1, 1, 4), (1, 1, 1), (1, 1, 1)], first) == 4


def test_imagenet_standardisation_needs_three_channels(caplog):
    assert standardization({"standardize_image": "imagenet1k"}, 3, "img")[1] == list(IMAGENET_MEAN)
    with caplog.at_level(logging.WARNING):
        assert standardization({"standardize_image": "imagenet1k"}, 1, "img") == (None, None, None)
    assert "needs 3 channels" in caplog.text
    assert standardization({"standardize_image": None}, 3, "img") == (None, None, None)


def test_fit_reads_the_sample_of_the_column(png):
    paths = [str(png(np.zeros((8, 12), np.uint8), f"{i}.png")) for i in range(3)]
    paths.append(str(png(np.zeros((16, 12, 3), np.uint8), "big.png")))
    meta = fit_image(pd.Series([None, *paths]), {**PREP, "standardize_image": None}, {}, "img")
    assert (meta["height"], meta["width"], meta["num_channels"]) == (10, 12, 1)
    assert meta["missing_value_strategy"] == "bfill" and meta["in_memory"] is True
    assert meta["mean"] is None and meta["torchvision"] is None


def test_fit_fill_values(png):
    a, b = (str(png(np.zeros((2, 2), np.uint8), name)) for name in ("a.png", "b.png"))
    cells = pd.Series([a, b, a])
    const = {**PREP, "missing_value_strategy": "fill_with_const", "num_channels": 1, "height": 2}
    assert fit_image(cells, const, {}, "img")["fill_value"] == 128.0  # Ludwig's gray
    mode = {**const, "missing_value_strategy": "fill_with_mode"}
    assert fit_image(cells, mode, {}, "img")["fill_value"] == a


def test_a_column_without_images_is_a_data_error():
    with pytest.raises(DataError, match="no images in the training split"):
        fit_image(pd.Series([None, ""]), PREP, {}, "img")
