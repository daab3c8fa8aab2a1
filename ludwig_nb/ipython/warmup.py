"""Import what the first ``%%ludwig_config`` cell needs, in the background, at ``%load_ext``.

A first run used to show its dashboard 4-6 s after the cell ran: pandas, the config
schema, ipywidgets and bqplot loaded on the main thread, and torch (on the worker thread)
slowed every one of them down by holding the interpreter. ``%load_ext`` is an explicit
request to use the extension, so it starts one daemon thread that imports these modules
in order; a cell that runs before they are done waits for the module being imported,
never longer than it would have. torch and the engine's first optimizer (``then``: the
built-in engine's warm-up) come only after the dashboard's modules are loaded (loading torch
first made a cell sent at once wait 3-4 s), so that a later cell's first step comes at once.
A cell that is building its dashboard and checking its data :func:`holds <holding>` the
pandas/bqplot step and the torch step back (at most ``HOLD_MAX_S``): their imports hold the
interpreter (pandas ~1 s, torch ~2 s), and a dashboard built alongside them took twice as
long, while the run's first step waits for the same total work either way. The dashboard
itself needs neither (its charts are made at the first step), so it comes first.
Nothing is started at package import.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
from collections.abc import Callable, Iterator

__all__ = [
    "HOLD_MAX_S",
    "LATER_MODULES",
    "WARM_MODULES",
    "holding",
    "start_kernel_warm_up",
    "warm_imports",
]

log = logging.getLogger(__name__)

#: in the order the first cell needs them: its check (the engine's check modules come right
#: after the config's) and its dashboard (no pandas)
WARM_MODULES = (
    "ludwig_nb.config",
    "ludwig_nb.runs",
    "ludwig_nb.runs.monitoring",
    "ipywidgets",
    "ludwig_nb.ui.show",
    "ludwig_nb.ui.summary",
)

#: held back like torch while a cell builds its dashboard and its run reads the data (that
#: read imports pandas itself): what the run's thread (then the engine's data modules) and
#: the charts need next
LATER_MODULES = (
    "ludwig_nb.data.loading",
    "bqplot",
    "ludwig_nb.ui.charts.curve_chart",
)

#: seconds the torch step waits at most for cells that hold it (a cell that never
#: displays, or a stuck one, does not keep torch from loading)
HOLD_MAX_S = 5.0

_started = threading.Event()
_holds = [0]  # cells building their dashboard now
_released = threading.Condition()


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """Hold the warm-up's ``then`` step (torch) back while the block runs.

    The block is a cell building its dashboard; the hold lasts at most :data:`HOLD_MAX_S`
    seconds.

    Yields:
        Nothing; the hold ends with the block.
    """
    with _released:
        _holds[0] += 1
    try:
        yield
    finally:
        with _released:
            _holds[0] -= 1
            _released.notify_all()


def _wait_for_cells(max_wait_s: float) -> None:
    with _released:
        _released.wait_for(lambda: _holds[0] == 0, timeout=max_wait_s)


def _import(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # a module that cannot load fails later, where its error is shown
            log.debug("ludwig_nb: warm import of %s failed", name, exc_info=True)


def _import_all(
    modules: tuple[str, ...],
    then: Callable[[], None] | None = None,
    max_hold_s: float = HOLD_MAX_S,
    later: tuple[str, ...] = (),
) -> None:
    _import(modules)
    if later:
        # a Run All cell builds its dashboard now: pandas imported beside it held the
        # interpreter and made the dashboard late; its run's thread imports it when needed
        _wait_for_cells(max_hold_s)
        _import(later)
    if then is not None:
        _wait_for_cells(max_hold_s)
        then()


def warm_imports(
    modules: tuple[str, ...] = WARM_MODULES,
    then: Callable[[], None] | None = None,
    later: tuple[str, ...] = LATER_MODULES,
) -> threading.Thread | None:
    """Start the warm-up thread once per process; returns it (None if it already ran).

    ``modules`` first; ``later`` and then ``then`` (the engine's own warm-up: torch) wait for
    the cells that :func:`hold <holding>` them, so a cell sent at once does not wait for them.
    """
    if _started.is_set():
        return None
    _started.set()
    thread = threading.Thread(
        target=_import_all,
        args=(modules, then, HOLD_MAX_S, later),
        name="ludwig_nb-warmup",
        daemon=True,
    )
    thread.start()
    return thread


def start_kernel_warm_up() -> threading.Thread | None:
    """What a kernel starts at ``%load_ext`` (or the ludwig_nb kernel as it starts).

    The kernel's runs read their data in this process (its warm-up loads pandas for the
    charts anyway, and with a prefetch process a Run All's first step came later, 1.81 s vs
    1.46 s), and one background thread imports the first cell's modules, then has the engine
    warm up (torch; held back while a cell builds its dashboard): the dashboard soon, and the
    first step soon after ``train()``. The engine is the default engine, asked through the
    engine protocol: its check and data modules join the lists, and its warm-up is its own one
    thread (``Engine.start_warm_up``): one already started (by a ``train()``) is joined, not
    run twice. Started before the IPython shell exists, ipywidgets finds no shell to register
    its comm targets with: the ludwig_nb kernel registers them itself. Returns the thread (None
    if it was started before).
    """
    from ludwig_nb.engines.registry import default_engine

    engine = default_engine()
    engine.use_in_kernel()
    config, *views = WARM_MODULES
    loading, *charts = LATER_MODULES
    return warm_imports(
        modules=(config, *engine.check_modules, *views),
        later=(loading, *engine.data_modules, *charts),
        then=lambda: _join(engine.start_warm_up()),
    )


def _join(thread: threading.Thread | None) -> None:
    if thread is not None:
        thread.join()
