"""A run's data read, checked and preprocessed in a second process while this one imports torch.

A short run's whole process is held to one core by the GIL: on the issue-15 case (50,000 rows
x 30 numbers, 3 epochs, 2 cores) importing torch took ~1.1 s of its 2.0 s, pandas ~0.2 s, and
reading, checking and preprocessing the table ~0.2 s more, one after the other however many
threads shared them. So while this process imports torch, a child process (this module's
:func:`child_main`) reads and checks the dataset (``check_dataset``), computes the trivial
baseline and preprocesses every split (``splits.prepare_arrays``), and the training process
never imports pandas at all.

Its messages come back over a pipe as pickles, in this order: ``checked`` (rows, columns,
the content fingerprint, the ``DataWarning`` texts and warning log lines of the check),
``baseline``, one ``feature`` per feature fitted, ``arrays`` (the metadata and each split's
arrays); or ``error`` at the first exception, which is the one the same call raises
in-process (a ``DataError``, word for word), raised again here.

Used by ``BuiltinEngine.prepare_data`` (:func:`wanted`) for a dataset that is a file (a path or
a demo name) while the engine's torch modules are not loaded yet (a fresh process: the CLI, a
script's first ``train()``), on two cores or more, unless ``LUDWIG_NB_PREFETCH=0``, and never
in a kernel that loaded the extension (:func:`read_in_this_process`). A child that
cannot start, or ends without its answer, costs nothing but the time: the run reads the file
itself, as without it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

__all__ = [
    "ENV_VAR",
    "Prefetch",
    "PrefetchLost",
    "child_main",
    "engine_loaded",
    "read_in_this_process",
    "wanted",
]

log = logging.getLogger(__name__)

#: ``LUDWIG_NB_PREFETCH=0`` reads the data in the training process, always
ENV_VAR = "LUDWIG_NB_PREFETCH"

#: the split arrays of a run: split name -> feature name (or the stack key) -> arrays
SplitArrays = dict[str, dict[str, tuple[Any, ...]]]
FeatureProgress = Callable[[int, int, str, int], None]


class PrefetchLost(RuntimeError):
    """The child process ended without its answer (killed, crashed, could not start)."""


_in_this_process = threading.Event()  # set: this process reads its runs' data itself


def read_in_this_process() -> None:
    """From now on, this process reads its runs' data itself (``%load_ext`` in a kernel).

    A kernel's warm-up imports pandas for the dashboard's charts and holds torch back while
    a cell checks its data, so a child would only add its own start-up to that check.
    """
    _in_this_process.set()


def engine_loaded() -> bool:
    """Whether the engine's torch modules are imported whole (not absent, not importing)."""
    module = sys.modules.get("ludwig_nb.engines.builtin.trainer")
    return module is not None and hasattr(module, "Training")


def wanted(dataset: Any, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether to read ``dataset`` in a child process (see the module's text)."""
    if environ.get(ENV_VAR, "1").strip() == "0" or _in_this_process.is_set():
        return False
    if not isinstance(dataset, str | os.PathLike):
        return False  # a DataFrame (or a dict of splits) is in this process already
    return (os.cpu_count() or 1) >= 2 and not engine_loaded()


def _child_command() -> list[str]:
    """The child's command line: this interpreter, importing the ludwig_nb this process runs."""
    root = str(Path(__file__).resolve().parents[3])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from ludwig_nb.engines.builtin.prefetch import child_main; child_main()"
    )
    return [sys.executable, "-c", code]


class Prefetch:
    """The handle of one child process preparing ``dataset`` for ``config``.

    :meth:`checked` waits for the read and check (raising what they raised); the run layer
    then reads :attr:`rows`, :attr:`columns` and :meth:`baseline`, and the engine
    :meth:`arrays`. Any thread may call them, one at a time (they read one pipe in order).

    Args:
        config: The rendered config.
        dataset: A path or a demo name.
        seed: The seed to split with.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        dataset: str | os.PathLike[str],
        seed: int,
    ) -> None:
        self.source = dataset
        self.seed = seed
        self.rows = 0
        self.columns = 0
        self.fingerprint = ""
        self._lock = threading.Lock()
        self._baseline: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._features: list[tuple[int, int, str, int]] = []  # read, not yet relayed
        self._arrays: tuple[dict[str, Any], SplitArrays] | None = None
        self._seen: set[str] = set()  # the kinds of message read so far
        self._closed = False  # let go of by its owner (close())
        try:
            self._proc = subprocess.Popen(
                _child_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError) as err:  # no interpreter to start, no pipes left
            raise PrefetchLost(f"the prefetch process did not start: {err}") from err
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._out: IO[bytes] = self._proc.stdout
        request = {"config": dict(config), "dataset": dataset, "seed": seed}
        try:
            pickle.dump(request, self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._proc.stdin.close()
        except OSError as err:  # it died at once
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
            self.close()
            raise PrefetchLost(f"the prefetch process did not take its request: {err}") from err

    # -- reading the pipe ------------------------------------------------------------
    def _read(self) -> None:
        """Read the next message and keep what it says (raising an ``error``'s exception)."""
        try:
            kind, payload = pickle.load(self._out)
        except (EOFError, OSError, pickle.UnpicklingError, ValueError) as err:
            self._proc.kill()
            self._proc.wait()
            self._out.close()  # under the lock: this thread is the reader
            raise PrefetchLost(f"the prefetch process ended early: {err!r}") from err
        self._seen.add(kind)
        if kind == "error":
            self._proc.wait()
            self._out.close()
            raise payload
        if kind == "checked":
            from ludwig_nb.data.errors import DataWarning

            self.rows, self.columns = payload["rows"], payload["columns"]
            self.fingerprint = str(payload.get("fingerprint") or "")
            for message in payload["warnings"]:
                warnings.warn(message, DataWarning, stacklevel=2)
            for name, level, text in payload["logs"]:
                logging.getLogger(name).log(level, "%s", text)
        elif kind == "baseline":
            self._baseline = payload
        elif kind == "feature":
            self._features.append(payload)
        elif kind == "arrays":
            self._arrays = payload

    def _until(self, kind: str, on_feature: FeatureProgress | None = None) -> None:
        """Read messages until one of ``kind`` has come, telling ``on_feature`` of features."""
        with self._lock:
            while True:
                while on_feature is not None and self._features:
                    on_feature(*self._features.pop(0))
                if kind in self._seen:
                    return
                self._read()

    # -- what the run reads ------------------------------------------------------------
    def checked(self) -> Prefetch:
        """Wait until the dataset is read and checked; returns this handle.

        Raises what ``check_dataset`` raised (``DataError``), or :class:`PrefetchLost`.
        """
        self._until("checked")
        return self

    def baseline(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``trivial_baseline``'s (metrics, predictors), None without one or when it is lost."""
        try:
            self._until("baseline")
        except PrefetchLost:
            log.debug("ludwig_nb: no baseline from the prefetch process", exc_info=True)
        return self._baseline

    def arrays(
        self,
        seed: int,
        metadata: Mapping[str, Any] | None = None,
        on_feature: FeatureProgress | None = None,
    ) -> tuple[dict[str, Any], SplitArrays] | None:
        """The fitted metadata and each split's arrays, relaying ``on_feature`` as it goes.

        None when the child cannot serve this run: it split with another seed, the run
        transforms with saved ``metadata`` (a resume), or it was lost; the caller then reads
        the file itself. Raises the preprocessing's own ``DataError``.
        """
        if seed != self.seed or metadata is not None:
            self._end_child()
            return None
        try:
            self._until("arrays", on_feature)
        except PrefetchLost:
            if self._closed:  # its run stopped: nobody wants the data any more
                raise
            log.debug("ludwig_nb: the prefetch process was lost", exc_info=True)
            return None
        finally:
            self._end_child()
        served, self._arrays = self._arrays, None  # the tensors will hold them, not this
        return served

    def close(self) -> None:
        """End the child and let go of it (the run stopped, or is done with it); idempotent.

        A thread still waiting on :meth:`arrays` then gets :class:`PrefetchLost` rather than
        reading the file itself.
        """
        self._closed = True
        self._end_child()

    def _end_child(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill that did not take
            log.debug("ludwig_nb: the prefetch process outlived its kill")
        if self._lock.acquire(blocking=False):  # else its reader closes it, at the EOF
            try:
                self._out.close()
            finally:
                self._lock.release()


# -- the child ---------------------------------------------------------------------------
class _Records(logging.Handler):
    """Keeps the warning (and worse) log lines of the child for the parent to log."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, record.levelno, record.getMessage()))


def _prepare(request: Mapping[str, Any], send: Callable[[str, Any], None]) -> None:
    """The run's data path, as the training process would take it, each result sent."""
    from ludwig_nb.data import DataWarning, check_dataset
    from ludwig_nb.data.baseline import table_baseline
    from ludwig_nb.data.fingerprint import table_fingerprint
    from ludwig_nb.engines.builtin.splits import prepare_arrays

    config, seed = request["config"], request["seed"]
    records = _Records()
    logging.getLogger().addHandler(records)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        loaded = check_dataset(config, request["dataset"])
    table = loaded if not isinstance(loaded, dict) else loaded["training"]  # (wanted(): a file)
    send(
        "checked",
        {
            "rows": len(table),
            "columns": len(table.columns),
            "fingerprint": table_fingerprint(loaded),
            "warnings": [str(w.message) for w in caught if issubclass(w.category, DataWarning)],
            "logs": records.lines,
        },
    )
    logging.getLogger().removeHandler(records)
    try:  # as runs/baseline.py computes it in-process: a courtesy, never an error
        metrics, predictors = table_baseline(config, loaded, seed)
        baseline = (metrics, predictors) if metrics else None
    except Exception:
        baseline = None
    send("baseline", baseline)
    send(
        "arrays",
        prepare_arrays(config, loaded, seed, None, lambda *feature: send("feature", feature)),
    )


def child_main(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The child process: one request in, its messages out (see the module's text)."""
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not land in the message stream

    def send(kind: str, payload: Any) -> None:
        pickle.dump((kind, payload), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        request = pickle.load(inp)
        _prepare(request, send)
    except BrokenPipeError:  # the parent is gone: nobody to tell
        return
    except Exception as exc:
        try:
            pickle.dumps(exc)
        except Exception:  # an exception that does not pickle goes as its words
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        try:
            send("error", exc)
        except BrokenPipeError:
            return
