"""Every image of a column checked cheaply before any thread starts.

A cell that is a path is resolved (relative to the dataset file's folder, or the working
directory for a DataFrame) and its file is opened for its header only, plus its last bytes: a
PNG must end with its end chunk, a JPEG with its end marker, a GIF with its trailer, so that a
truncated download fails here and not mid-epoch. Bytes are checked the same way; arrays by shape
and type. Missing cells are the missing-value strategy's. The first problems are raised as one
located :class:`DataError` (column, row, file, what to do).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.cells import cell_kind, describe_cell, resolve_path
from ludwig_nb.engines.builtin.image.pixels import UnreadableImage, open_image

__all__ = ["check_cell", "check_image_column", "resolve_column"]

_SHOWN = 5  # problems named in the message
_TAIL = 64  # bytes read from a file's end
_ENDINGS: dict[str, Callable[[bytes], bool]] = {
    "PNG": lambda tail: b"IEND" in tail[-12:],
    "JPEG": lambda tail: tail.rstrip(b"\x00\r\n\t ").endswith(b"\xff\xd9"),
    "GIF": lambda tail: tail.rstrip(b"\x00").endswith(b";"),
}
_END_WORDS = {"PNG": "PNG end chunk", "JPEG": "JPEG end marker", "GIF": "GIF trailer"}


def resolve_column(series: pd.Series, base: Path) -> pd.Series:
    """``series`` with every path cell made absolute against ``base`` (other cells unchanged)."""
    values = [
        resolve_path(v, base) if cell_kind(v) == "path" else v for v in series.to_numpy(object)
    ]
    return pd.Series(values, index=series.index, name=series.name, dtype=object)


def check_cell(cell: Any) -> str | None:
    """Why a (resolved) cell cannot be read as an image; None when it can or is missing."""
    kind = cell_kind(cell)
    if kind in ("missing", "pil", "constant"):
        return None
    try:
        opened = open_image(cell)
    except UnreadableImage as err:
        return str(err)
    if isinstance(opened, np.ndarray):  # an array, or a .npy file's
        return None
    try:
        return _check_opened(opened, cell, kind)
    finally:
        opened.close()


def _check_opened(image: Any, cell: Any, kind: str) -> str | None:
    width, height = image.size
    if width <= 0 or height <= 0:
        return f"an image of {width} x {height} pixels"
    ending = _ENDINGS.get(str(image.format))
    if ending is None:
        return None
    tail = bytes(cell[-_TAIL:]) if kind == "bytes" else _file_tail(Path(cell))
    if not ending(tail):
        return f"truncated (no {_END_WORDS[str(image.format)]}): re-create or re-download it"
    return None


def _file_tail(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - _TAIL))
        return handle.read()


def check_image_column(series: pd.Series, column: str, where: str) -> None:
    """Check every cell of ``series`` (paths already resolved).

    Raises :class:`DataError` naming the column, the first rows at fault and their files.
    """
    problems: list[str] = []
    count = 0
    for label, cell in series.items():
        reason = check_cell(cell)
        if reason is None:
            continue
        count += 1
        if len(problems) < _SHOWN:
            problems.append(f"row {label}: {describe_cell(cell)}: {reason}")
    if not problems:
        return
    more = f" and {count - len(problems)} more" if count > len(problems) else ""
    noun = "image" if count == 1 else "images"
    raise DataError(
        f"{where}: image column {column!r} has {count} unreadable {noun} "
        f"({'; '.join(problems)}{more}); fix the files or remove those rows"
        + (_URL_HINT if any(": a URL" in p for p in problems) else "")
    )


_URL_HINT = (
    " (URLs are not downloaded: save the images and list their paths, absolute or relative to "
    "the dataset file)"
)
