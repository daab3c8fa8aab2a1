"""TensorData with a lazy column (decoded images in a disk cache) beside in-memory tensors."""

from __future__ import annotations

import numpy as np
import torch

from ludwig_nb.engines.builtin.device import TensorData
from ludwig_nb.engines.builtin.image.disk import DiskImages


def _data(tmp_path):
    images = np.arange(6 * 12, dtype=np.uint8).reshape(6, 3, 2, 2)
    cache = DiskImages.create(6, (3, 2, 2), folder=str(tmp_path))
    cache.write(0, images)
    labels = np.arange(6, dtype=np.int64)
    return TensorData({"img": (cache,), "y": (labels,)}), images


def test_lazy_columns_are_read_per_batch_not_held(tmp_path):
    data, images = _data(tmp_path)
    assert data.rows == 6 and set(data.lazy) == {"img"} and set(data.tensors) == {"y"}
    assert data.nbytes == 6 * 8  # only the labels are held
    batch = data.gather(torch.tensor([5, 0, 5]))
    assert torch.equal(batch["img"][0], torch.from_numpy(images[[5, 0, 5]]))
    assert batch["y"][0].tolist() == [5, 0, 5]
    sliced = data.rows_slice(2, 4)
    assert torch.equal(sliced["img"][0], torch.from_numpy(images[2:4]))


def test_placing_on_cpu_changes_nothing(tmp_path):
    data, _ = _data(tmp_path)
    assert data.place(torch.device("cpu")) is data and data.device.type == "cpu"
    assert data.gather(torch.tensor([1]))["img"][0].device.type == "cpu"
