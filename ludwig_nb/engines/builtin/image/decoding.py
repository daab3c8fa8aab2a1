"""The decode pass: every image of a split decoded and resized once, to uint8.

Into one ``rows x C x H x W`` array when ``in_memory`` is on and it fits (at most half of the
memory available now), else into a :class:`DiskImages` cache file, said in the log when
``in_memory`` was asked for. ``num_processes`` above 1 decodes in that many worker processes
(spawned: they import numpy and Pillow only); 1 decodes in the calling thread (Pillow releases
the GIL while it decodes and resizes). Workers (workers.py) write their rows into the cache file
themselves; for an in-memory array they send them back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.cells import describe_cell
from ludwig_nb.engines.builtin.image.disk import DiskImages
from ludwig_nb.engines.builtin.image.pixels import Geometry, UnreadableImage, decode

__all__ = ["Decoded", "decode_cells", "fits_in_memory"]

log = logging.getLogger(__name__)

#: decoded images: in memory, or in a cache file
Decoded = np.ndarray | DiskImages
_BLOCK_BYTES = 8 * 1024**2  # decoded bytes per block a worker handles at once
#: ``(start row, block)`` -> None: told of each block as it is decoded
BlockWriter = Callable[[int, np.ndarray], None]


def fits_in_memory(nbytes: int, available: int | None = None) -> bool:
    """Whether ``nbytes`` of images fit: at most half the memory available now."""
    if available is None:
        import psutil

        available = int(psutil.virtual_memory().available)
    return nbytes <= available // 2


def _block_rows(geometry: Geometry, rows: int, processes: int) -> int:
    by_bytes = max(16, _BLOCK_BYTES // max(1, geometry.row_bytes))
    spread = -(-rows // max(1, processes * 4))  # a few blocks per worker, for balance
    return max(1, min(by_bytes, max(16, spread)))


def decode_block(
    cells: Sequence[Any], geometry: Geometry, cache: DiskImages | None = None, start: int = 0
) -> tuple[np.ndarray | None, tuple[int, str] | None]:
    """Decode ``cells``: ``(block, None)``, or ``(None, (offset, reason))`` at the first failure.

    With ``cache`` the block is written there at row ``start`` and None is returned in its place.
    """
    block = np.empty((len(cells), geometry.channels, geometry.height, geometry.width), np.uint8)
    for offset, cell in enumerate(cells):
        try:
            block[offset] = decode(cell, geometry)
        except UnreadableImage as err:
            return None, (offset, str(err))
    if cache is not None:
        cache.write(start, block)
        return None, None
    return block, None


def decode_cells(
    cells: Sequence[Any],
    labels: Sequence[Any],
    geometry: Geometry,
    *,
    column: str,
    in_memory: bool = True,
    processes: int = 1,
) -> Decoded:
    """Every cell (missing ones already filled) decoded as ``geometry`` says.

    ``labels``: each cell's row label, for the error. Raises :class:`DataError` naming the row
    and file of the first image that cannot be decoded.
    """
    rows = len(cells)
    shape = (geometry.channels, geometry.height, geometry.width)
    nbytes = rows * geometry.row_bytes
    if in_memory and fits_in_memory(nbytes):
        target: Decoded = np.empty((rows, *shape), dtype=np.uint8)
    else:
        if in_memory:
            log.warning(
                "image column %r: %.1f GiB of decoded images do not fit in memory; decoding to "
                "a disk cache in the temporary folder instead (as in_memory: false)",
                column,
                nbytes / 1024**3,
            )
        target = DiskImages.create(rows, shape)
    step = _block_rows(geometry, rows, processes)
    starts = range(0, rows, step)
    failure = None
    if processes > 1 and len(starts) > 1:
        failure = _in_workers(cells, geometry, target, starts, step, processes)
    else:
        failure = _here(cells, geometry, target, starts, step)
    if failure is not None:
        _raise(failure, cells, labels, column)
    return target


def _here(
    cells: Sequence[Any], geometry: Geometry, target: Decoded, starts: range, step: int
) -> tuple[int, str] | None:
    cache = target if isinstance(target, DiskImages) else None
    for start in starts:
        block, failure = decode_block(cells[start : start + step], geometry, cache, start)
        if failure is not None:
            return start + failure[0], failure[1]
        if block is not None:
            target[start : start + len(block)] = block  # type: ignore[index]
    return None


def _in_workers(
    cells: Sequence[Any],
    geometry: Geometry,
    target: Decoded,
    starts: range,
    step: int,
    processes: int,
) -> tuple[int, str] | None:
    from ludwig_nb.engines.builtin.image.workers import WorkerLost, WorkerPool

    cache = target if isinstance(target, DiskImages) else None
    tasks = [(list(cells[s : s + step]), geometry, cache, s) for s in starts]
    try:
        pool = WorkerPool(min(processes, len(tasks)))
    except OSError as err:
        log.warning("no image decoding processes (%s); decoding in this process", err)
        return _here(cells, geometry, target, starts, step)
    try:
        with pool:
            for index, (block, failure) in pool.map(_WHERE, tasks):
                start = starts[index]
                if failure is not None:
                    return start + failure[0], failure[1]
                if block is not None:
                    target[start : start + len(block)] = block  # type: ignore[index]
    except WorkerLost as err:
        log.warning("%s; decoding in this process", err)
        return _here(cells, geometry, target, starts, step)
    return None


_WHERE = f"{__name__}:decode_block"


def _raise(
    failure: tuple[int, str], cells: Sequence[Any], labels: Sequence[Any], column: str
) -> None:
    row, reason = failure
    raise DataError(
        f"image column {column!r}, row {labels[row]}: {describe_cell(cells[row])}: {reason}; "
        "fix the file or remove that row"
    )
