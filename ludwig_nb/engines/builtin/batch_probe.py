"""``batch_size: auto``: a short throughput probe over a few candidate sizes.

Candidates are powers of two from 16 up to a cap (128 on CPU as in Ludwig, 4096 on
CUDA; never above 20 % of the training rows or ``max_batch_size``). Each is timed over a
few steps on a copy of the model; the probe stops when throughput falls, memory runs out
or ``budget`` seconds are spent, and returns the fastest size.

``eval_batch_size: auto``: forward passes only (no gradients), sizes from the training
batch size doubling up to the largest evaluation split (4096 rows on CUDA, 1024 on CPU);
the largest size that fits memory bounds the search, and the fastest one under it wins.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["candidate_sizes", "eval_candidate_sizes", "probe_batch_size", "probe_eval_batch_size"]

log = logging.getLogger(__name__)


def candidate_sizes(rows: int, on_cuda: bool, max_batch_size: int | None) -> list[int]:
    """Batch sizes to try: powers of two from 16 up to a cap.

    The cap is 4096 on CUDA (128 on the CPU), at most a fifth of the ``rows`` training rows and at
    most ``max_batch_size``; never empty.
    """
    cap = min(4096 if on_cuda else 128, max(16, int(0.2 * rows)), max_batch_size or 2**40)
    sizes, size = [], 16
    while size <= cap:
        sizes.append(size)
        size *= 2
    return sizes or [max(1, cap)]


def probe_batch_size(
    run_steps: Callable[[int, int], None],
    sizes: list[int],
    budget: float = 3.0,
    steps: int = 3,
    timer: Callable[[], float] = time.perf_counter,
) -> int:
    """Fastest of ``sizes`` in samples per second.

    ``run_steps(size, n)`` trains ``n`` steps of ``size`` rows on a throw-away copy. Out-of-memory
    ends the search.
    """
    best, best_rate = sizes[0], 0.0
    began = timer()
    for size in sizes:
        try:
            run_steps(size, 1)  # warm-up
            start = timer()
            run_steps(size, steps)
            rate = size * steps / max(timer() - start, 1e-9)
        except RuntimeError as err:  # CUDA OOM is a RuntimeError subclass
            if "out of memory" not in str(err).lower():
                raise
            break
        log.debug("batch size %d: %.0f samples/s", size, rate)
        if rate > best_rate:
            best, best_rate = size, rate
        elif rate < 0.9 * best_rate:
            break
        if timer() - began > budget:
            break
    log.info("batch_size auto: %d (%.0f samples/s)", best, best_rate)
    return best


def eval_candidate_sizes(batch_size: int, rows: int, on_cuda: bool) -> list[int]:
    """Evaluation batch sizes to try.

    ``batch_size`` doubling up to ``rows`` (the largest evaluation split) and the device cap.
    """
    cap = min(4096 if on_cuda else 1024, max(batch_size, rows))
    sizes, size = [], max(1, batch_size)
    while size <= cap:
        sizes.append(size)
        size *= 2
    return sizes or [max(1, batch_size)]


def probe_eval_batch_size(
    run_forward: Callable[[int], None],
    sizes: list[int],
    budget: float = 2.0,
    timer: Callable[[], float] = time.perf_counter,
) -> int:
    """Fastest of ``sizes`` (rows per second) among those that fit.

    ``run_forward(size)`` evaluates one batch of ``size`` rows. Out-of-memory ends the search (the
    sizes below it fit); so does ``budget`` seconds spent.
    """
    best, best_rate = sizes[0], 0.0
    began = timer()
    for size in sizes:
        try:
            run_forward(size)  # warm-up (and the memory check)
            start = timer()
            run_forward(size)
            rate = size / max(timer() - start, 1e-9)
        except RuntimeError as err:  # CUDA OOM is a RuntimeError subclass
            if "out of memory" not in str(err).lower():
                raise
            break
        if rate > best_rate:
            best, best_rate = size, rate
        if timer() - began > budget:
            break
    log.info("eval_batch_size auto: %d (%.0f rows/s)", best, best_rate)
    return best
