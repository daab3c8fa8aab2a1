from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.engines.builtin.image.cells import (
    Constant,
    cell_kind,
    describe_cell,
    is_missing_cell,
    missing_mask,
    resolve_path,
)


@pytest.mark.parametrize("value", [None, math.nan, pd.NA, "", "  ", "NaN", "null", "?"])
def test_missing_cells(value):
    assert is_missing_cell(value)
    assert cell_kind(value) == "missing"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("images/a.png", "path"),
        (Path("a.png"), "path"),
        ("https://example.org/a.png", "url"),
        ("s3://bucket/a.png", "url"),
        (b"\x89PNG", "bytes"),
        (np.zeros((2, 2)), "array"),
        (Constant(3), "constant"),
        (12, "other"),
    ],
)
def test_kinds(value, kind):
    assert cell_kind(value) == kind


def test_pil_images_are_their_own_kind():
    from PIL import Image

    assert cell_kind(Image.new("L", (2, 2))) == "pil"


def test_missing_mask_over_mixed_cells():
    cells = ["a.png", None, np.zeros((2, 2)), "", b"x"]
    assert missing_mask(cells).tolist() == [False, True, False, True, False]


def test_relative_paths_resolve_against_the_base(tmp_path):
    assert resolve_path("images/a.png", tmp_path) == str(tmp_path / "images" / "a.png")
    assert resolve_path("/abs/a.png", tmp_path) == "/abs/a.png"
    assert resolve_path("~/a.png", tmp_path) == str(Path.home() / "a.png")


def test_descriptions_name_the_file_or_the_shape():
    assert describe_cell("x/a.png") == "x/a.png"
    assert describe_cell(b"123") == "<3 bytes>"
    assert describe_cell(np.zeros((4, 5, 3), np.uint8)) == "<array 4x5x3 uint8>"
