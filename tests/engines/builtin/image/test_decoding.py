from __future__ import annotations

import numpy as np
import pytest

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image import decoding
from ludwig_nb.engines.builtin.image.cells import Constant
from ludwig_nb.engines.builtin.image.decoding import decode_cells, fits_in_memory
from ludwig_nb.engines.builtin.image.disk import DiskImages
from ludwig_nb.engines.builtin.image.pixels import Geometry

GEOMETRY = Geometry(6, 6, 1)


@pytest.fixture
def paths(png):
    rng = np.random.default_rng(1)
    return [str(png(rng.integers(0, 255, (6, 6), np.uint8), f"{i}.png")) for i in range(40)]


def test_in_memory_is_one_uint8_array_in_row_order(paths):
    out = decode_cells(paths, list(range(40)), GEOMETRY, column="img")
    assert isinstance(out, np.ndarray) and out.shape == (40, 1, 6, 6) and out.dtype == np.uint8
    from PIL import Image

    assert (out[7, 0] == np.asarray(Image.open(paths[7]))).all()


def test_in_memory_false_is_a_disk_cache_with_the_same_rows(paths):
    memory = decode_cells(paths, list(range(40)), GEOMETRY, column="img")
    disk = decode_cells(paths, list(range(40)), GEOMETRY, column="img", in_memory=False)
    assert isinstance(disk, DiskImages)
    assert (disk.read(np.arange(40)) == memory).all()


def test_worker_processes_give_the_same_rows(paths, monkeypatch):
    monkeypatch.setattr(decoding, "_BLOCK_BYTES", 36 * 8)  # several blocks per worker
    memory = decode_cells(paths, list(range(40)), GEOMETRY, column="img")
    both = decode_cells(paths, list(range(40)), GEOMETRY, column="img", processes=2)
    assert (both == memory).all()
    disk = decode_cells(
        paths, list(range(40)), GEOMETRY, column="img", processes=2, in_memory=False
    )
    assert (disk.read(np.arange(40)) == memory).all()


def test_images_that_do_not_fit_go_to_disk_and_say_so(paths, monkeypatch, caplog):
    monkeypatch.setattr(decoding, "fits_in_memory", lambda nbytes: False)
    out = decode_cells(paths, list(range(40)), GEOMETRY, column="img")
    assert isinstance(out, DiskImages)
    assert "do not fit in memory" in caplog.text


def test_a_failing_image_names_its_row_and_file(paths, tmp_path):
    cells = [*paths[:3], str(tmp_path / "gone.png"), Constant(5)]
    with pytest.raises(DataError, match=r"image column 'img', row 103: .*gone.png: no such file"):
        decode_cells(cells, [100, 101, 102, 103, 104], GEOMETRY, column="img")


def test_a_failing_image_in_a_worker_names_its_row(paths, tmp_path, monkeypatch):
    monkeypatch.setattr(decoding, "_BLOCK_BYTES", 36 * 8)
    cells = [*paths, str(tmp_path / "gone.png")]
    with pytest.raises(DataError, match=r"row 40: .*gone\.png"):
        decode_cells(cells, list(range(41)), GEOMETRY, column="img", processes=2)


def test_the_memory_rule_is_half_the_available_memory():
    assert fits_in_memory(50, available=100)
    assert not fits_in_memory(51, available=100)
