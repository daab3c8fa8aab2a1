"""A small pool of worker processes for the decode pass, started as plain interpreters.

``multiprocessing``'s spawn re-imports the parent's main module in each child, which fails for a
script read from stdin and costs a kernel's imports; so each worker is this interpreter running
:func:`serve` (``python -c``), importing only the function it is given (numpy and Pillow for the
decoder). Tasks and results are pickles over the worker's stdin and stdout, one thread per worker
in the parent feeding it the next task.
"""

from __future__ import annotations

import importlib
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["WorkerLost", "WorkerPool", "serve"]


class WorkerLost(RuntimeError):
    """A worker process ended without answering (killed, out of memory, could not start)."""


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """A worker's loop: ``(module:function, args)`` pickles in, ``function(*args)`` pickles out.

    Ends at None or at the end of its input.
    """
    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout.buffer
    while True:
        try:
            task = pickle.load(source)
        except EOFError:
            return
        if task is None:
            return
        where, args = task
        module, name = where.split(":")
        result = getattr(importlib.import_module(module), name)(*args)
        pickle.dump(result, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()


def _command() -> list[str]:
    root = str(Path(__file__).resolve().parents[4])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from ludwig_nb.engines.builtin.image.workers import serve; serve()"
    )
    return [sys.executable, "-c", code]


class WorkerPool:
    """``count`` worker processes; :meth:`map` runs tasks on them, :meth:`close` ends them.

    Raises ``OSError`` when a worker cannot be started.
    """

    def __init__(self, count: int) -> None:
        self.processes = [
            subprocess.Popen(_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(max(1, count))
        ]

    def map(self, where: str, tasks: Iterable[tuple[Any, ...]]) -> Iterator[tuple[int, Any]]:
        """Yield ``(task index, where(*task))`` as the workers finish them (any order).

        Raises :class:`WorkerLost` when a worker dies.
        """
        numbered = iter(enumerate(tasks))
        lock = threading.Lock()
        results: queue.SimpleQueue[tuple[int, Any] | BaseException | None] = queue.SimpleQueue()

        def feed(process: subprocess.Popen[bytes]) -> None:
            assert process.stdin is not None and process.stdout is not None
            try:
                while True:
                    with lock:
                        item = next(numbered, None)
                    if item is None:
                        break
                    pickle.dump((where, item[1]), process.stdin, pickle.HIGHEST_PROTOCOL)
                    process.stdin.flush()
                    results.put((item[0], pickle.load(process.stdout)))
            except (EOFError, OSError, pickle.UnpicklingError) as err:
                reason = str(err) or "no answer"
                results.put(WorkerLost(f"an image decoding process ended ({reason})"))
            finally:
                results.put(None)

        threads = [threading.Thread(target=feed, args=(p,), daemon=True) for p in self.processes]
        for thread in threads:
            thread.start()
        running = len(threads)
        while running:
            got = results.get()
            if got is None:
                running -= 1
            elif isinstance(got, BaseException):
                raise got
            else:
                yield got

    def close(self) -> None:
        """End every worker (politely, then by force)."""
        for process in self.processes:
            try:
                assert process.stdin is not None
                pickle.dump(None, process.stdin)
                process.stdin.close()
            except (OSError, ValueError):
                pass
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
