"""What an image cell holds and where its file is: no Pillow, no torch.

A cell is a file path (absolute, or relative to the dataset file; relative to the working
directory for a DataFrame), the bytes of an encoded image, an array of pixels (``H x W`` or
``H x W x C``, values 0-255), a ``PIL.Image``, or missing (None, NaN, an empty or NA-like string).
URLs are named and refused: nothing is downloaded.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "MISSING_TOKENS",
    "Constant",
    "cell_kind",
    "describe_cell",
    "is_missing_cell",
    "missing_mask",
    "resolve_path",
]

#: Text cells read as missing (the data layer's spellings).
MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "null", "none", "?"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


class Constant:
    """A missing image filled with one pixel value (``fill_with_const``; Ludwig's gray is 128).

    Args:
        value: The pixel value of every channel, 0-255.
    """

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Constant) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("Constant", self.value))

    def __repr__(self) -> str:
        return f"Constant({self.value:g})"


def is_missing_cell(value: Any) -> bool:
    """Whether a cell holds no image: None, NaN/NA, or an empty or NA-like string."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().lower() in MISSING_TOKENS
    if isinstance(value, float):
        return bool(np.isnan(value))
    return type(value).__name__ == "NAType"  # pandas.NA, without importing pandas


def missing_mask(cells: Any) -> np.ndarray:
    """Bool per cell of an iterable of cells: True where :func:`is_missing_cell`."""
    return np.fromiter((is_missing_cell(v) for v in cells), dtype=bool)


def cell_kind(value: Any) -> str:
    """``"missing"``, ``"url"``, ``"path"``, ``"bytes"``, ``"array"``, ``"pil"``, ``"constant"``.

    Or ``"other"`` for what no image is made of (a number, a list).
    """
    if is_missing_cell(value):
        return "missing"
    if isinstance(value, Constant):
        return "constant"
    if isinstance(value, str | os.PathLike):
        return "url" if _URL.match(str(value)) else "path"
    if isinstance(value, bytes | bytearray | memoryview):
        return "bytes"
    if isinstance(value, np.ndarray):
        return "array"
    if type(value).__module__.startswith("PIL."):
        return "pil"
    return "other"


def resolve_path(value: str | os.PathLike[str], base: Path) -> str:
    """``value`` as an absolute path: relative paths (and ``~``) resolved against ``base``."""
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def describe_cell(value: Any) -> str:
    """A cell in a few words for an error message (a path as written, else its kind and size)."""
    kind = cell_kind(value)
    if kind in ("path", "url"):
        return str(value)
    if kind == "bytes":
        return f"<{len(value)} bytes>"
    if kind == "array":
        return f"<array {'x'.join(map(str, value.shape))} {value.dtype}>"
    return f"<{type(value).__name__}>"
