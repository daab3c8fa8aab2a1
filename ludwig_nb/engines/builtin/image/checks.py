"""Every image of a column checked cheaply before any thread starts.

A cell that is a path is resolved (relative to the dataset file's folder, or the working
directory for a DataFrame) and only its first and last bytes are read: a PNG, JPEG or GIF is told
by its signature and must end with its end chunk, end marker or trailer, so that a truncated
download fails here and not mid-epoch; another format is opened by Pillow for its header (and
the same ending checks where they apply). Bytes are checked the same way; arrays by shape
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
_HEAD = 32  # bytes read from a file's start
_TAIL = 64  # bytes read from a file's end
#: the common formats, told by their first bytes (the rest: Pillow reads the header)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
)
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
    known, problem = False, None
    if kind == "path":
        known, problem = _check_file(Path(cell))
    elif kind == "bytes":
        data = bytes(cell)
        known, problem = _check_known(data[:_HEAD], data[-_TAIL:], len(data))
    return problem if known else _check_with_pillow(cell, kind)


def _check_file(path: Path) -> tuple[bool, str | None]:
    """``(known, problem)`` of a file from its first and last bytes.

    ``known`` is False when its format is not one of the common ones (Pillow then reads its
    header); ``problem`` None when it is fine.
    """
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(_HEAD)
            handle.seek(max(0, size - _TAIL))
            tail = handle.read()
    except FileNotFoundError:
        return True, "no such file"
    except IsADirectoryError:
        return True, "a directory, not an image file"
    except OSError as err:
        return True, f"unreadable ({err.strerror or err})"
    return _check_known(head, tail, size)


def _check_known(head: bytes, tail: bytes, size: int) -> tuple[bool, str | None]:
    if size == 0:
        return True, "an empty file"
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    if kind is None:
        return False, None
    if kind == "PNG" and (len(head) < 24 or head[16:24] == bytes(8)):
        return True, "a PNG without its size (a damaged header)"
    ending = _ENDINGS.get(kind)
    if ending is not None and not ending(tail):
        return True, f"truncated (no {_END_WORDS[kind]}): re-create or re-download it"
    return True, None


def _check_with_pillow(cell: Any, kind: str) -> str | None:
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
