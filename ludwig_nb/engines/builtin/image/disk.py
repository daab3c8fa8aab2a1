"""Decoded images in a file: uint8 rows of ``channels x height x width``, read by row index.

The disk cache of ``in_memory: false`` (and of images that do not fit in memory). Rows are read
with ``pread`` into a fresh buffer, so a process holds only the batches it reads, however large
the cache (a memory map would keep every page it touched resident). The file is created in the
temporary folder (``TMPDIR``) and removed when the object is collected or closed; a pickled copy
(another process) reads the same file and never removes it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DiskImages"]


def _remove(fd: int, path: str, owner: bool) -> None:
    os.close(fd)
    if owner:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


class DiskImages:
    """``rows`` decoded images of ``shape`` (channels, height, width) in the file ``path``.

    Args:
        path: The cache file (``rows x prod(shape)`` bytes).
        rows: Images in it.
        shape: ``(channels, height, width)`` of each.
        owner: Whether this object removes the file when it goes.
    """

    def __init__(self, path: str | Path, rows: int, shape: Sequence[int], owner: bool = False):
        self.path = str(path)
        self.rows = int(rows)
        self.shape = tuple(int(s) for s in shape)
        self.row_bytes = int(np.prod(self.shape))
        self.owner = owner
        try:  # a worker process writes its rows through a pickled copy
            self._fd = os.open(self.path, os.O_RDWR)
        except PermissionError:
            self._fd = os.open(self.path, os.O_RDONLY)
        self._closer = weakref.finalize(self, _remove, self._fd, self.path, owner)

    @classmethod
    def create(cls, rows: int, shape: Sequence[int], folder: str | None = None) -> DiskImages:
        """A new cache file of ``rows`` zero images in ``folder`` (the temporary folder)."""
        fd, path = tempfile.mkstemp(prefix="ludwig_nb-images-", suffix=".u8", dir=folder)
        try:
            os.ftruncate(fd, int(rows) * int(np.prod(shape)))
        finally:
            os.close(fd)
        return cls(path, rows, shape, owner=True)

    @property
    def nbytes(self) -> int:
        """Bytes of the file (on disk, not in memory)."""
        return self.rows * self.row_bytes

    def write(self, start: int, block: np.ndarray) -> None:
        """Write ``block`` (``n x C x H x W`` uint8) as rows ``start`` to ``start + n - 1``."""
        data = np.ascontiguousarray(block, dtype=np.uint8)
        os.pwrite(self._fd, data.data.cast("B"), start * self.row_bytes)

    def read_range(self, start: int, end: int) -> np.ndarray:
        """Rows ``start`` to ``end - 1`` as a new ``n x C x H x W`` uint8 array."""
        start, end = max(0, start), min(self.rows, end)
        out = np.empty((max(0, end - start), *self.shape), dtype=np.uint8)
        if out.size:
            self._read_into(out.data.cast("B"), start * self.row_bytes)
        return out

    def read(self, index: np.ndarray) -> np.ndarray:
        """The rows ``index`` (any order, repeats allowed) as a new uint8 array."""
        out = np.empty((len(index), *self.shape), dtype=np.uint8)
        flat = out.data.cast("B")
        size = self.row_bytes
        for i, row in enumerate(np.asarray(index, dtype=np.int64)):
            if not 0 <= row < self.rows:
                raise IndexError(f"row {row} of {self.rows}")
            self._read_into(flat[i * size : (i + 1) * size], int(row) * size)
        return out

    def _read_into(self, view: memoryview, offset: int) -> None:
        done = 0
        while done < len(view):
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got <= 0:
                raise OSError(f"{self.path}: the image cache ended early (was it removed?)")
            done += got

    def close(self) -> None:
        """Close the file (and remove it when owned); reads fail afterwards."""
        self._closer()

    def __len__(self) -> int:
        return self.rows

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "shape": self.shape}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["rows"], state["shape"], owner=False)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"DiskImages({self.path!r}, rows={self.rows}, shape={self.shape})"
