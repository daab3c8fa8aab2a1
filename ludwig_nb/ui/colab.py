"""The Colab profile: what the notebook views do differently when ``google.colab`` exists.

Colab (colabtools, 2026) speaks only the ipywidgets 7 protocol, loads custom widgets such as
bqplot from a CDN only after ``google.colab.output.enable_custom_widget_manager()``, and
does not render widget updates sent from a background thread while no cell runs
(colabtools #3373). So, in Colab:

* charts are drawn server-side as SVG inside core ``HTML`` widgets
  (:mod:`ludwig_nb.ui.charts.svg_widgets`), unless the custom widget manager is already active or
  the user asks for bqplot (``charts="bqplot"``), which enables it;
* the pump runs on the main thread while the cell executes (training stays in its own
  thread), and a kernel interrupt becomes a graceful stop (:func:`graceful_interrupt`);
* the first blocking cell says once why it blocks and how to keep the notebook free.

Detection happens at call time, never at import, and never imports ``google.colab`` unless
it is importable.
"""

from __future__ import annotations

import contextlib
import html
import importlib
import importlib.util
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping

__all__ = [
    "BQPLOT_MISSING",
    "CHARTS",
    "StopOnInterrupt",
    "blocking_notice_bundle",
    "blocking_notice_html",
    "bqplot_installed",
    "custom_widget_manager_active",
    "enable_custom_widget_manager",
    "graceful_interrupt",
    "in_colab",
    "resolve_charts",
    "take_notice",
]

#: what ``charts=`` accepts: "auto" (SVG in Colab unless the custom widget manager is
#: active, bqplot elsewhere), "svg" (core widgets only, everywhere) or "bqplot"
CHARTS = ("auto", "svg", "bqplot")


class _Once:
    """A kernel-wide flag that is taken once (the blocking notice is shown once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = False

    def take(self) -> bool:
        with self._lock:
            first, self._taken = not self._taken, True
        return first

    def reset(self) -> None:
        with self._lock:
            self._taken = False


_notice = _Once()


def in_colab(modules: Mapping[str, object] | None = None) -> bool:
    """True when ``google.colab`` is imported or importable (a Colab runtime)."""
    modules = sys.modules if modules is None else modules
    if "google.colab" in modules:
        return True
    if modules is not sys.modules:  # an explicit module table: only it counts
        return False
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):  # no ``google`` package at all, or a broken one
        return False


def _widgets_module() -> object:
    """``google.colab.output._widgets`` if Colab is there (its state is private)."""
    try:
        return importlib.import_module("google.colab.output._widgets")
    except Exception:  # not Colab, or a Colab whose layout changed
        return None


def custom_widget_manager_active() -> bool:
    """True when Colab's CDN widget manager was enabled in this kernel (bqplot can render).

    Colab offers no public query; this reads the URL its ``enable_custom_widget_manager``
    stores, and answers False when that private state is missing.
    """
    return bool(getattr(_widgets_module(), "_installed_url", None))


def enable_custom_widget_manager() -> bool:
    """Enable Colab's custom widget manager; False when this Colab has none (or no Colab)."""
    try:
        from google.colab import output

        output.enable_custom_widget_manager()
    except Exception:  # an old Colab, or none: core widgets still render
        return False
    return True


#: how to get bqplot where it is missing (it is the ``lab`` extra: bqplot 0.13 needs ipywidgets
#: 8, which Colab does not have; bqplot 0.12 is the one that runs there)
BQPLOT_MISSING = (
    "charts='bqplot' needs bqplot, which is not installed: pip install 'ludwig_nb[lab]' "
    "(in Colab: %pip install 'bqplot>=0.12.47,<0.13', as bqplot 0.13 needs ipywidgets 8)"
)


def bqplot_installed() -> bool:
    """Whether bqplot can be imported here (found, not imported)."""
    return importlib.util.find_spec("bqplot") is not None


def resolve_charts(
    charts: str = "auto", colab: bool | None = None, bqplot: bool | None = None
) -> str:
    """``"svg"`` or ``"bqplot"`` for ``charts`` (one of :data:`CHARTS`).

    ``"auto"`` picks SVG where bqplot is not installed (``bqplot``: whether it is; None:
    look). In Colab, ``"bqplot"`` enables the custom widget manager (its code loads from
    Google's CDN), and ``"auto"`` picks bqplot only if the manager is already active.
    Raises ``ValueError`` for anything else than :data:`CHARTS`, and for ``"bqplot"``
    without bqplot installed (saying how to install it).
    """
    if charts not in CHARTS:
        raise ValueError(f"charts must be one of {', '.join(CHARTS)}, not {charts!r}")
    colab = in_colab() if colab is None else colab
    if charts == "svg":
        return "svg"
    if not (bqplot_installed() if bqplot is None else bqplot):
        if charts == "bqplot":
            raise ValueError(BQPLOT_MISSING)
        return "svg"
    if not colab:
        return "bqplot"
    if charts == "bqplot":
        enable_custom_widget_manager()
        return "bqplot"
    return "bqplot" if custom_widget_manager_active() else "svg"


def take_notice() -> bool:
    """True the first time it is called in this kernel (the blocking notice is shown once)."""
    return _notice.take()


def _reset_notice() -> None:
    """For tests: the next :func:`take_notice` is a first one again."""
    _notice.reset()


def blocking_notice_html(run_name: str) -> str:
    """The one-time message of a blocking Colab cell: why it blocks, how to avoid it."""
    name = html.escape(run_name)
    return (
        '<div class="lnb-colab-notice" style="font-size:90%;color:#555;'
        'border-left:3px solid #1f77b4;padding:2px 8px;margin:4px 0">'
        f"<b>Why this cell stays busy:</b> Colab draws widget updates only while a cell runs, "
        f"so this cell keeps the dashboard live until <code>{name}</code> ends; training "
        "itself runs in its own thread. <b>Interrupt</b> (the stop button, Ctrl+M I) stops "
        "the run gracefully: the cell ends with its summary and the model trained so far. "
        "<br><b>To keep the notebook free</b> while it trains, start it with "
        "<code>%%ludwig_config --background …</code> "
        "(or <code>ludwig_nb.show(run, block=False)</code>); later, "
        f"<code>{name}.wait()</code> blocks until the end and returns the run handle, and "
        f"<code>ludwig_nb.show({name})</code> in any cell shows the live dashboard again, "
        "caught up from the start. (Shown once per session.)</div>"
    )


def blocking_notice_bundle(run_name: str) -> dict[str, str]:
    """The notice as a display bundle (HTML, and one plain-text line for text front ends)."""
    return {
        "text/plain": (
            f"ludwig_nb: Colab draws widget updates only while a cell runs, so this cell stays "
            f"busy until {run_name} ends; Interrupt stops it gracefully. --background returns "
            f"at once; {run_name}.wait() returns the handle, ludwig_nb.show({run_name}) "
            "shows the dashboard again."
        ),
        "text/html": blocking_notice_html(run_name),
    }


class StopOnInterrupt:
    """An interrupt callback.

    The first call runs ``stop`` (a graceful stop), any later one raises ``KeyboardInterrupt`` (the
    way out of a blocking cell if a run cannot stop).

    ``stop`` must be thread-safe and quick (``run.stop``): it may run in a signal handler.
    """

    def __init__(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        self.count = 0

    def __call__(self) -> None:
        """Stop the run on the first interrupt; raise ``KeyboardInterrupt`` on the second."""
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        self._stop()


@contextlib.contextmanager
def graceful_interrupt(on_interrupt: Callable[[], None]) -> Iterator[None]:
    """Turn SIGINT into ``on_interrupt()`` while inside.

    While inside, SIGINT (Colab's Interrupt, Ctrl-C) calls ``on_interrupt()`` instead of raising
    ``KeyboardInterrupt`` wherever the main thread happens to be, so an interrupt can never land in
    the middle of a frame (``on_interrupt`` may still raise, see :class:`StopOnInterrupt`). Off the
    main thread, where signals cannot be handled, this does nothing and the caller's own
    ``KeyboardInterrupt`` handling applies.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: object) -> None:
        on_interrupt()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
