"""``show_run``: put a run's live dashboard in the current cell; ``shutdown`` for unload.

Modes (``mode="auto"`` picks one):

* ``"widgets"`` (JupyterLab, Notebook 7, VS Code): the dashboard is displayed with a
  display id and registered with the shared kernel :class:`~ludwig_nb.ui.pump.Pump`, whose
  daemon thread draws at most ``fps`` frames a second while the kernel stays free. When
  the run ends, the display is replaced by a static HTML summary (``update_display``),
  so a saved notebook shows the result without a widget state.
* ``"colab"`` (``google.colab`` importable; see ``ui/colab.py``): core ipywidgets-7
  widgets only, charts drawn as SVG unless Colab's custom widget manager is active or
  ``charts="bqplot"``; and, since Colab does not render widget updates made from other
  threads, blocks (below) unless ``block=False``, saying once in the cell why.
* ``"text"`` (plain IPython, terminal, no widget front end): the same state rendered as
  text/HTML through a display handle, updated at most once a second (every 10 s in a
  terminal, where each update prints a line).

With ``block=True`` (``%%ludwig_config --wait``, and by default in Colab) the view gets a
pump of its own that runs on the calling thread until the run ends; a kernel interrupt
(SIGINT) stops the run gracefully and the pump draws its end (a second one raises
``KeyboardInterrupt``).

A ``post_execute`` hook makes a cell in which a run ends (``run.wait()``) wait briefly for
the dashboard's last frame, so the summary is published while that cell still runs and
tools that save the notebook (nbclient, ``jupyter execute``) keep it.
"""

from __future__ import annotations

import contextlib
import html
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.ui import colab
from ludwig_nb.ui.pump import Pump

# The dashboard's modules (ipywidgets, bqplot) load with this one, i.e. before a run's
# worker starts loading torch: loaded after it, they took seconds, fighting it for the
# interpreter, and the first dashboard came late.
with contextlib.suppress(ImportError):
    import ludwig_nb.ui.dashboard  # noqa: F401

__all__ = [
    "detect_mode",
    "discard_view",
    "pump_view",
    "shared_pump",
    "show_run",
    "show_view",
    "shutdown",
]

MODES = ("auto", "widgets", "colab", "text")

_lock = threading.Lock()


class _KernelUi:
    """The kernel-wide UI state: the shared pump and the shell the hook is registered on."""

    def __init__(self) -> None:
        self.pump: Pump | None = None
        self.hook_shell: Any = None
        self.pending_finals: list[tuple[Any, dict[str, str]]] = []  # (handle, summary bundle)


_ui = _KernelUi()
_FINAL_WAIT_S = 2.0  # post_execute: how long a cell waits for a finished run's last frame


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def detect_mode(shell: object = None, modules: Any = None) -> str:
    """``"colab"``, ``"widgets"`` (a Jupyter kernel with a front end) or ``"text"``."""
    if colab.in_colab(sys.modules if modules is None else modules):
        return "colab"
    shell = _shell() if shell is None else shell
    if shell is not None and getattr(shell, "kernel", None) is not None:
        return "widgets"
    return "text"


def shared_pump(fps: float = 4.0) -> Pump:
    """The kernel's one UI pump (created on first use; not started here)."""
    with _lock:
        if _ui.pump is None:
            _ui.pump = Pump(fps=fps)
        return _ui.pump


def _default_sampler() -> object:
    """The kernel's shared GPU/host sampler (started), or None where there is none."""
    try:
        from ludwig_nb.gpu import kernel_sampler

        return kernel_sampler()
    except Exception:  # no sampler, no gauges; the dashboard still works
        return None


def show_run(
    run: object,
    *,
    mode: str = "auto",
    sampler: object = None,
    fps: float = 4.0,
    block: bool | None = None,
    charts: str = "auto",
) -> None:
    """Display ``run``'s live dashboard in the current cell and keep it updated.

    ``mode``: "auto", "widgets", "colab" or "text". ``sampler`` defaults to the kernel's
    GPU sampler; ``fps`` bounds the frames per second. With ``block`` (None: only in
    Colab) the call pumps on this thread until the run ends, and a kernel interrupt stops
    the run gracefully. ``charts``: "auto", "svg" (core widgets only) or "bqplot" (in
    Colab this enables its custom widget manager). A dashboard shown after the run
    started (or ended) catches up from the run's first event. Returns None, so a cell
    ending with it echoes nothing (use :func:`show_view` for the view object). Raises
    ``ValueError`` for an unknown ``mode`` or ``charts``.
    """
    show_view(run, mode=mode, sampler=sampler, fps=fps, block=block, charts=charts)


def show_view(
    run: Any,
    *,
    mode: str = "auto",
    sampler: object = None,
    fps: float = 4.0,
    block: bool | None = None,
    charts: str = "auto",
) -> object:
    """Show a run and return the view.

    :func:`show_run`, returning the view (a :class:`~ludwig_nb.ui.dashboard.Dashboard` or a
    :class:`~ludwig_nb.ui.text_view.TextView`).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    resolved = detect_mode() if mode == "auto" else mode
    in_colab = resolved == "colab"
    chart_kind = colab.resolve_charts(charts, colab=in_colab)
    if block is None:
        block = in_colab  # Colab renders widget updates made while a cell runs only
    if resolved == "text":
        view = _text_view(run)
    else:
        if in_colab and block and colab.take_notice():
            _display(colab.blocking_notice_bundle(run.name))
        view = _dashboard(
            run, sampler if sampler is not None else _default_sampler(), _chart(chart_kind)
        )
    pump_view(view, fps=fps, block=block, stop=lambda: run.stop("interrupt"))
    if block:
        # the view closes on the final state; the run is done once its files are written, a
        # moment later: a cell that blocked until the end returns with ``run.is_done`` true
        run.wait(_FINAL_WAIT_S)
    return view


def pump_view(view: Any, *, fps: float, block: bool, stop: Callable[[], None]) -> None:
    """Drive ``view`` (a ``ui.pump.View``).

    With ``block``, on a pump of its own on this thread until the view closes, a kernel interrupt
    calling ``stop`` (a second one gives the cell back); else on the kernel's shared pump, in its
    thread.
    """
    if block:
        pump = _blocking_pump(fps)
        pump.add(view)
        interrupt = colab.StopOnInterrupt(stop)
        with colab.graceful_interrupt(interrupt):
            pump.run_until(lambda: view.closed, interrupt)
    else:
        pump = shared_pump(fps)
        pump.add(view)
        pump.start()
        _install_hook()


def _display(obj: object, metadata: dict[str, object] | None = None) -> Any:
    """Display ``obj`` (a mimebundle dict or an object) with a new display id; its handle."""
    from IPython import display as ipython_display

    display: Any = ipython_display.display
    if isinstance(obj, dict):
        return display(obj, raw=True, display_id=True, metadata=metadata)
    return display(obj, display_id=True)


def run_metadata(run: Any, model_id: str = "") -> dict[str, object]:
    """The display metadata naming ``run`` (and ``model_id``, its dashboard widget's model).

    Read by the notebook pre-save hook (``server/notebook_fallback.py``) to save a snapshot in place
    of the widget, and by the sidebar extension (``labextension/src/notebook_refresh.ts``), which
    puts the widget back in a reloaded page while the kernel still holds its model.
    """
    from ludwig_nb.core.status_html import METADATA_KEY

    meta: dict[str, object] = {
        "run_id": run.id,
        "directory": str(getattr(run, "directory", "") or ""),
    }
    if model_id:
        meta["model_id"] = model_id
    return {METADATA_KEY: meta}


def _widget_bundle(widget: Any, label: str, fallback_html: str = "") -> dict[str, Any]:
    """The display bundle of a widget, built by hand.

    Ipywidgets 7 displays widgets through ``_ipython_display_``, which drops the display id we need
    to replace it later. A stable ``text/plain`` (not the widget repr) keeps nbval comparisons
    steady; the ``text/html`` fallback is what nbviewer, GitHub and a front end without the widget
    manager show.
    """
    bundle = {
        "text/plain": label,
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": widget.model_id,
        },
    }
    if fallback_html:
        bundle["text/html"] = fallback_html
    return bundle


def _fallback_html(run: Any) -> str:
    """The bundle's readable fallback: what the run is and where its results go."""
    directory = html.escape(str(getattr(run, "directory", "") or ""))
    return (
        '<div class="ludwig-nb-snapshot" data-status="live">'
        f"<b>{html.escape(run.name)}</b>: ludwig_nb live dashboard (a widget). Where widgets "
        f"do not render, the run's status and summary are in <code>{directory}</code> and "
        "in the JupyterLab sidebar; when the run ends this cell shows its summary.</div>"
    )


def _publish_final(handle: Any, bundle: dict[str, str]) -> None:
    """Replace the cell's display with ``bundle``, twice.

    Now (any thread), and once more from the next ``post_execute`` (main thread, inside a running
    cell), so that a message sent between two cells, which notebook savers ignore, is not the only
    copy.
    """
    if handle is None:
        return
    handle.update(bundle, raw=True)
    with _lock:
        _ui.pending_finals.append((handle, bundle))


def _final_summary(handle: object) -> Any:
    def publish(dashboard: Any) -> None:
        from ludwig_nb.ui.summary import summary_mimebundle

        _publish_final(handle, summary_mimebundle(dashboard.summary_html(), dashboard.state))

    return publish


def _chart(kind: str) -> object:
    """The dashboard's chart class for ``kind`` ("svg" or "bqplot")."""
    if kind == "svg":
        from ludwig_nb.ui.charts.svg_widgets import SvgCurveChart

        return SvgCurveChart
    from ludwig_nb.ui.dashboard import bqplot_chart

    return bqplot_chart  # imports bqplot when the first chart is made, not now


def _dashboard(run: Any, sampler: object, chart: Any) -> object:
    from ludwig_nb.ui.dashboard import Dashboard

    dashboard = Dashboard(run, sampler=sampler, chart=chart)
    bundle = _widget_bundle(
        dashboard.widget, f"ludwig_nb dashboard: {run.name}", _fallback_html(run)
    )
    handle = _display(bundle, metadata=run_metadata(run, dashboard.widget.model_id))
    dashboard.display_handle = handle
    dashboard.on_final(_final_summary(handle))
    return dashboard


def discard_view(view: Any) -> None:
    """Take a shown view back out of its cell: no more frames, no summary, an empty display.

    For a run removed before it trained (its dataset failed the check on the run's thread):
    the cell then shows only the error, as when the check ran before the dashboard.
    """
    pump = _ui.pump
    if pump is not None:
        pump.remove(view)
    discard = getattr(view, "discard", None)
    if discard is not None:
        discard()
    handle = getattr(view, "display_handle", None)
    if handle is None:
        return
    with _lock:
        _ui.pending_finals = [(h, b) for h, b in _ui.pending_finals if h is not handle]
    handle.update({"text/plain": "", "text/html": ""}, raw=True)


def _blocking_pump(fps: float) -> Pump:
    """A pump of its own for one view, run on the calling thread."""
    return Pump(fps=fps)


def _text_view(run: Any) -> object:
    from ludwig_nb.ui.text_view import TextView

    shell = _shell()
    terminal = shell is None or getattr(shell, "kernel", None) is None
    handle = _display(
        {"text/plain": f"{run.name}: starting", "text/html": f"<i>{html.escape(run.name)}</i>"}
    )
    return TextView(
        run,
        update=lambda bundle: handle.update(bundle, raw=True) if handle is not None else None,
        min_interval=10.0 if terminal else 1.0,
        final=lambda bundle: _publish_final(handle, bundle),
    )


# -- post_execute: publish the summary while the cell that saw the run end still runs ----------
def _await_final_frames() -> None:
    pump = _ui.pump
    if pump is not None and pump.running:
        deadline = time.monotonic() + _FINAL_WAIT_S
        for view in pump.views:
            run = getattr(view, "run", None)
            wait = getattr(view, "wait_closed", None)
            if run is None or wait is None or not getattr(run, "is_done", False):
                continue
            wait(max(0.0, deadline - time.monotonic()))
    with _lock:
        finals = list(_ui.pending_finals)
        _ui.pending_finals.clear()
    for handle, bundle in finals:
        handle.update(bundle, raw=True)


def _install_hook() -> None:
    shell = _shell()
    if shell is None or _ui.hook_shell is shell:
        return
    shell.events.register("post_execute", _await_final_frames)
    _ui.hook_shell = shell


def shutdown() -> None:
    """Stop the pump (for ``%unload_ext``); runs keep training and stay recoverable."""
    with _lock:
        pump, _ui.pump = _ui.pump, None
        _ui.pending_finals.clear()
    if pump is not None:
        pump.stop()
        for view in pump.views:
            pump.remove(view)
    if _ui.hook_shell is not None:
        with contextlib.suppress(ValueError):
            _ui.hook_shell.events.unregister("post_execute", _await_final_frames)
        _ui.hook_shell = None
