"""Image fixtures, all made offline: scikit-learn's digits as PNG files (upscaled), synthetic
shapes drawn with Pillow, and single images of every mode written on demand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ludwig_nb.data.image_datasets import write_digits, write_shapes


@pytest.fixture(scope="session")
def digits_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All 1,797 digits as 16 x 16 gray PNGs and the CSV listing them (relative paths)."""
    return write_digits(tmp_path_factory.mktemp("digits"), size=16)


@pytest.fixture(scope="session")
def shapes_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 synthetic 24 x 24 RGB shapes and their CSV."""
    return write_shapes(tmp_path_factory.mktemp("shapes"), rows=120, size=24)


@pytest.fixture
def png(tmp_path: Path):
    """``png(array, name="x.png", mode=None)`` writes an image file and returns its path."""
    from PIL import Image

    def write(array: np.ndarray, name: str = "x.png", mode: str | None = None) -> Path:
        path = tmp_path / name
        Image.fromarray(array, mode=mode).save(path)
        return path

    return write
