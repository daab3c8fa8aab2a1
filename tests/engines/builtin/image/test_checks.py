from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.checks import check_cell, check_image_column, resolve_column


def _pixels(h=8, w=8, c=3):
    return np.random.default_rng(0).integers(0, 255, (h, w, c), dtype=np.uint8)


def test_a_good_png_jpeg_and_gif_pass(png):
    for name in ("a.png", "a.jpg", "a.gif", "a.bmp"):
        assert check_cell(str(png(_pixels(), name))) is None


@pytest.mark.parametrize("name", ["a.png", "a.jpg", "a.gif"])
def test_a_truncated_file_is_named_truncated(png, name):
    path = png(_pixels(32, 32), name)
    os.truncate(path, os.path.getsize(path) - 20)
    assert "truncated" in check_cell(str(path))


def test_missing_files_directories_and_non_images(tmp_path):
    assert check_cell(str(tmp_path / "nope.png")) == "no such file"
    assert "directory" in check_cell(str(tmp_path))
    text = tmp_path / "notes.png"
    text.write_text("hello")
    assert check_cell(str(text)) == "not an image Pillow can read"


def test_urls_are_refused_by_name():
    assert "URL" in check_cell("https://example.org/cat.png")


def test_bytes_are_checked_like_files():
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(_pixels()).save(buffer, format="PNG")
    data = buffer.getvalue()
    assert check_cell(data) is None
    assert "truncated" in check_cell(data[:-30])


def test_arrays_are_checked_by_shape_and_type():
    assert check_cell(np.zeros((4, 4, 3), np.uint8)) is None
    assert "shape" in check_cell(np.zeros((4,), np.uint8))
    assert "not numbers" in check_cell(np.array([["a"]]))


def test_npy_files_are_images_too(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros((5, 5), np.uint8))
    assert check_cell(str(path)) is None


def test_the_column_error_names_rows_files_and_counts(png, tmp_path):
    good = str(png(_pixels()))
    cells = [good, str(tmp_path / "gone.png"), None, "https://x.org/a.png"] + [good] * 3
    series = pd.Series(cells, index=range(10, 17))
    with pytest.raises(DataError) as caught:
        check_image_column(series, "img", "data.csv")
    message = str(caught.value)
    assert message.startswith("data.csv: image column 'img' has 2 unreadable images")
    assert f"row 11: {tmp_path / 'gone.png'}: no such file" in message
    assert "row 13: https://x.org/a.png: a URL" in message
    assert "URLs are not downloaded" in message


def test_the_column_error_counts_beyond_the_five_it_shows(tmp_path):
    series = pd.Series([str(tmp_path / f"{i}.png") for i in range(8)])
    with pytest.raises(DataError, match=r"has 8 unreadable images .* and 3 more"):
        check_image_column(series, "img", "the dataset")


def test_resolve_column_leaves_other_cells_alone(tmp_path):
    array = np.zeros((2, 2), np.uint8)
    series = pd.Series(["a.png", "/abs/b.png", None, array], name="img")
    resolved = resolve_column(series, tmp_path)
    assert resolved.iloc[0] == str(tmp_path / "a.png")
    assert resolved.iloc[1] == "/abs/b.png"
    assert resolved.iloc[2] is None
    assert resolved.iloc[3] is array


def test_empty_files_and_damaged_png_headers(tmp_path, png):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    assert check_cell(str(empty)) == "an empty file"
    path = png(_pixels())
    data = bytearray(path.read_bytes())
    data[16:24] = bytes(8)  # IHDR width and height zeroed
    path.write_bytes(bytes(data))
    assert "damaged header" in check_cell(str(path))
