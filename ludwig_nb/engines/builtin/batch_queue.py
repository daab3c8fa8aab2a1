"""Batches made ahead in a background thread, at most a few at a time (a bounded queue).

For training data with columns read at each batch (decoded images in a disk cache,
``TensorData.lazy``): the reads (and the pinning for a GPU) of the next batches overlap the
current step, and the step's wait for its batch is what is left of them (the data wait the
dashboard shows). Batches held in memory are gathered in the step itself (a queue would only add
a thread switch).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["DEPTH", "BatchQueue", "batch_source"]

#: batches made ahead of the step that needs them
DEPTH = 3
_POLL_S = 0.1  # seconds between the producer's looks at its stop flag while the queue is full


class BatchQueue:
    """``make(i)`` for ``i`` in ``[start, count)``, made ahead by one thread, ``depth`` at most.

    Call it with each ``i`` in order to get that batch; an exception of ``make`` is raised there.
    :meth:`close` ends the thread (the epoch ended, or the run stopped).

    Args:
        make: The batch of step ``i`` of the epoch.
        start: The first ``i``.
        count: One past the last ``i``.
        depth: Batches made ahead at most.
    """

    def __init__(
        self, make: Callable[[int], Any], start: int, count: int, depth: int = DEPTH
    ) -> None:
        self._make = make
        self._queue: queue.Queue[tuple[int, Any, BaseException | None]] = queue.Queue(depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._produce, args=(start, count), name="ludwig_nb-batches", daemon=True
        )
        self._thread.start()

    def _produce(self, start: int, count: int) -> None:
        for i in range(start, count):
            try:
                item: tuple[int, Any, BaseException | None] = (i, self._make(i), None)
            except BaseException as err:  # raised again on the consumer's thread
                item = (i, None, err)
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=_POLL_S)
                    break
                except queue.Full:
                    continue
            if self._stop.is_set() or item[2] is not None:
                return

    def __call__(self, i: int) -> Any:
        """Batch ``i`` (waits for it); raises what ``make(i)`` raised."""
        got, batch, error = self._queue.get()
        if error is not None:
            raise error
        if got != i:  # the consumer skipped a batch: a bug, never silently the wrong data
            raise RuntimeError(f"batch {got} came where batch {i} was asked for")
        return batch

    def close(self) -> None:
        """Stop making batches and drop the ones made (returns once the thread has ended)."""
        self._stop.set()
        with contextlib.suppress(queue.Empty):
            while True:
                self._queue.get_nowait()
        self._thread.join()


@contextlib.contextmanager
def batch_source(
    make: Callable[[int], Any], start: int, count: int, ahead: bool
) -> Iterator[Callable[[int], Any]]:
    """``make`` itself, or a :class:`BatchQueue` over it when ``ahead`` (closed on exit)."""
    if not ahead:
        yield make
        return
    made = BatchQueue(make, start, count)
    try:
        yield made
    finally:
        made.close()
