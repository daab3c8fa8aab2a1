"""Splits cut column by column from the user's table equal the splits cut as frames."""

import numpy as np
import pytest
import torch

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin import splits
from ludwig_nb.engines.builtin.model import STACKED
from ludwig_nb.engines.builtin.setup import prepare_splits
from tests.engines.builtin.conftest import make_config, table

INPUTS = [
    {"name": "x", "type": "number"},
    {"name": "colour", "type": "category"},
    {"name": "target", "type": "number"},
    {"name": "text", "type": "text"},
]


def _both(monkeypatch, config, frame):
    by_rows = prepare_splits(config, frame, 42)
    monkeypatch.setattr(splits, "_by_rows", lambda config: False)
    as_frames = prepare_splits(config, frame, 42)
    return by_rows, as_frames


def test_column_wise_splits_equal_frame_splits_with_dropped_rows(monkeypatch):
    frame = table(rows=90)
    frame.loc[[3, 17, 40], "label"] = None  # outputs drop rows with a missing value
    config = make_config(INPUTS, [{"name": "label", "type": "binary"}])
    (meta_a, a), (meta_b, b) = _both(monkeypatch, config, frame)
    assert meta_a == meta_b
    assert a.keys() == b.keys() == {"training", "validation", "test"}
    assert sum(d.rows for d in a.values()) == 87
    for name in a:
        assert a[name].tensors.keys() == b[name].tensors.keys()
        for key, tensors in a[name].tensors.items():
            for left, right in zip(tensors, b[name].tensors[key], strict=True):
                assert torch.equal(left, right), (name, key)


def test_number_inputs_are_one_float32_matrix_in_input_order():
    config = make_config(INPUTS, [{"name": "label", "type": "binary"}])
    metadata, data = prepare_splits(config, table(rows=90), 42)
    train = data["training"]
    (matrix,) = train.tensors[STACKED]
    assert matrix.dtype == torch.float32 and matrix.shape == (train.rows, 2)
    assert "x" not in train.tensors and "target" not in train.tensors
    x = (matrix[:, 0] * metadata["features"]["x"]["std"]) + metadata["features"]["x"]["mean"]
    target = matrix[:, 1] * metadata["features"]["target"]["std"]
    target = target + metadata["features"]["target"]["mean"]
    assert np.allclose(3.0 * x.numpy() + 1.0, target.numpy(), atol=1e-4)  # table(): 3x + 1


def test_a_split_left_empty_by_dropped_rows_is_a_data_error():
    frame = table(rows=30)
    frame["label"] = None
    config = make_config(INPUTS[:1], [{"name": "label", "type": "binary"}])
    with pytest.raises(DataError, match="split is empty after dropping rows"):
        prepare_splits(config, frame, 42)
