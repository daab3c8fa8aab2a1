"""A run's events in memory: ``EventLog`` (steps in columns) against a plain list of
event objects (what ``Run`` kept before). ``python -m benchmarks.event_memory [--steps N]``

Prints bytes per step (tracemalloc), the cost of appending one step (the training thread
pays it at every step), the cost of rebuilding every step as an event (``list(run.events)``)
and of the step columns (``run.steps``), with the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable

from ludwig_nb.core import events as ev
from ludwig_nb.core.event_log import EventLog


def _steps(n: int) -> list[ev.StepFinished]:
    return [
        ev.StepFinished(100.0 + i, i, i // 1000, 99.5 + i, 32, 1.0 / (i + 1), 0.001)
        for i in range(n)
    ]


def _bytes(build: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del kept
    return float(used)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    n = parser.parse_args(argv).steps

    objects_b = _bytes(lambda: _steps(n)) / n
    source = _steps(n)

    def fill() -> EventLog:
        log = EventLog()
        for event in source:
            log.append(event)
        return log

    columns_b = _bytes(fill) / n
    as_list: list[ev.Event] = []
    began = time.perf_counter()
    for event in source:
        as_list.append(event)
    list_us = (time.perf_counter() - began) / n * 1e6
    began = time.perf_counter()
    log = fill()
    append_us = (time.perf_counter() - began) / n * 1e6
    began = time.perf_counter()
    rebuilt = list(log.view())
    rebuild_us = (time.perf_counter() - began) / n * 1e6
    assert rebuilt == source
    began = time.perf_counter()
    log.step_columns()
    columns_us = (time.perf_counter() - began) / n * 1e6

    print(f"{n} steps")
    print(f"memory per step: list of objects {objects_b:6.1f} B, EventLog {columns_b:6.1f} B")
    print(f"  ratio objects / columns: {objects_b / columns_b:.2f}x")
    print(f"append per step: list {list_us:.3f} us, EventLog {append_us:.3f} us")
    print(f"read every step: as events {rebuild_us:.2f} us, as columns {columns_us:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
