from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from ludwig_nb.engines.builtin.image.disk import DiskImages


def _rows(n: int) -> np.ndarray:
    return np.arange(n * 12, dtype=np.uint8).reshape(n, 3, 2, 2)


def test_rows_read_back_in_any_order(tmp_path):
    cache = DiskImages.create(5, (3, 2, 2), folder=str(tmp_path))
    cache.write(0, _rows(5))
    assert (cache.read(np.array([4, 0, 4])) == _rows(5)[[4, 0, 4]]).all()
    assert (cache.read_range(1, 3) == _rows(5)[1:3]).all()
    assert cache.read_range(4, 99).shape == (1, 3, 2, 2)
    assert cache.nbytes == 60 and len(cache) == 5
    with pytest.raises(IndexError):
        cache.read(np.array([5]))


def test_the_owner_removes_the_file_a_pickled_copy_does_not(tmp_path):
    cache = DiskImages.create(2, (3, 2, 2), folder=str(tmp_path))
    cache.write(0, _rows(2))
    copy = pickle.loads(pickle.dumps(cache))
    assert (copy.read(np.array([1])) == _rows(2)[1:]).all()
    copy.close()
    assert os.path.exists(cache.path)
    path = cache.path
    del cache
    assert not os.path.exists(path)


def test_reading_holds_no_more_than_the_batch(tmp_path):
    """pread into fresh buffers: nothing of the file stays mapped in the process."""
    cache = DiskImages.create(1000, (3, 8, 8), folder=str(tmp_path))
    batch = cache.read(np.arange(0, 1000, 100))
    assert batch.base is None or batch.base.nbytes == batch.nbytes
    with open("/proc/self/maps", encoding="utf-8") as maps:
        assert cache.path not in maps.read()
