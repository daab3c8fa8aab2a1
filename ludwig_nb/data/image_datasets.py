"""Small image datasets written to a folder, offline: for examples, tests and benchmarks.

* :func:`write_digits` — scikit-learn's bundled handwritten digits (1,797 images of 8 x 8,
  no download) upscaled and written as PNG files, with a CSV listing them (paths relative to the
  CSV), their label and the share of inked pixels (a number column beside the image).
* :func:`write_shapes` — synthetic images drawn with Pillow: a circle, a square or a triangle
  at a random place, size and colour on a noisy background, with the same kind of CSV.

Both return the CSV's path. Pillow (and scikit-learn for the digits) are imported here only.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ludwig_nb.data.errors import DataError

__all__ = ["SHAPES", "write_digits", "write_shapes"]

SHAPES = ("circle", "square", "triangle")


def _write_csv(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "label", "ink"])
        writer.writerows(rows)
    return path


def write_digits(folder: str | Path, size: int = 32, rows: int | None = None) -> Path:
    """Write scikit-learn's digits as ``size`` x ``size`` PNGs under ``folder``; the CSV's path.

    ``rows``: the first that many digits (all 1,797 by default). Raises :class:`DataError` when
    scikit-learn is not installed.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:
        raise DataError("the digits need scikit-learn: pip install scikit-learn") from err
    from PIL import Image

    digits = load_digits()
    root = Path(folder)
    (root / "images").mkdir(parents=True, exist_ok=True)
    listed = []
    for i, (pixels, label) in enumerate(zip(digits.images, digits.target, strict=True)):
        if rows is not None and i >= rows:
            break
        gray = np.clip(pixels * 16.0, 0, 255).astype(np.uint8)
        image = Image.fromarray(gray).resize((size, size), Image.Resampling.BILINEAR)
        name = f"images/{i:05d}.png"
        image.save(root / name)
        listed.append((name, str(int(label)), round(float((pixels > 4).mean()), 4)))
    return _write_csv(root / "digits.csv", listed)


def _draw(shape: str, size: int, rng: np.random.Generator) -> object:
    from PIL import Image, ImageDraw

    noise = rng.integers(0, 60, (size, size, 3), dtype=np.uint8)
    image = Image.fromarray(noise)
    draw = ImageDraw.Draw(image)
    extent = int(rng.integers(size // 3, size - 2))
    left, top = (int(v) for v in rng.integers(0, size - extent + 1, 2))
    box = (left, top, left + extent - 1, top + extent - 1)
    colour = tuple(int(v) for v in rng.integers(120, 256, 3))
    if shape == "circle":
        draw.ellipse(box, fill=colour)
    elif shape == "square":
        draw.rectangle(box, fill=colour)
    else:
        draw.polygon([(left + extent // 2, top), (left, box[3]), (box[2], box[3])], fill=colour)
    return image


def write_shapes(folder: str | Path, rows: int = 600, size: int = 32, seed: int = 0) -> Path:
    """Write ``rows`` synthetic ``size`` x ``size`` RGB PNGs of shapes under ``folder``."""
    rng = np.random.default_rng(seed)
    root = Path(folder)
    (root / "images").mkdir(parents=True, exist_ok=True)
    listed = []
    for i in range(rows):
        shape = SHAPES[i % len(SHAPES)]
        image = _draw(shape, size, rng)
        name = f"images/{i:05d}.png"
        image.save(root / name)  # type: ignore[attr-defined]
        ink = float((np.asarray(image).max(axis=2) > 100).mean())
        listed.append((name, shape, round(ink, 4)))
    return _write_csv(root / "shapes.csv", listed)
