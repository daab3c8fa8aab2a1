"""The live training dashboard: a ``ui.pump.View`` over a run's event stream.

Each :meth:`Dashboard.refresh` drains the run's new events into the curves and the
throughput, reads the run's one ``RunState`` and ETA (runs/handle.py: the view never
reduces an event into a state or an estimate of its own), then writes every changed widget
trait inside one ``hold_sync`` batch: one comm message per changed widget per frame,
however many steps happened. Button clicks only call ``run.stop()/pause()/resume()``;
what the buttons then look like is the next frame's business. When the run ends the view
draws its last frame, marks itself closed and calls its ``on_final`` callbacks (the cell
then swaps the widget for a static summary, see ``ui/show.py``).
"""

from __future__ import annotations

import contextlib
import html
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState
from ludwig_nb.runs.handle import RunHandle
from ludwig_nb.ui.charts.curves import CurveData
from ludwig_nb.ui.eta_text import EtaText
from ludwig_nb.ui.formatting import (
    STATUS_COLORS,
    alarm_banner_html,
    deadline_html,
    error_html,
    eta_line,
    format_throughput,
    format_tokens_per_s,
    header_html,
    pace_html,
    progress_text,
    slowdown_html,
)
from ludwig_nb.ui.gauges import MiniGauges
from ludwig_nb.ui.llm_view import llm_panel_html
from ludwig_nb.ui.run_view import RunView
from ludwig_nb.ui.summary import summary_html
from ludwig_nb.ui.throughput import ThroughputMeter
from ludwig_nb.ui.workers_row import WorkersRow

if TYPE_CHECKING:
    from ludwig_nb.ui.charts.curve_chart import Writes

__all__ = ["Dashboard", "bqplot_chart", "bqplot_ready"]

_ACTIVE = ("queued", "preprocessing", "training", "evaluating", "paused")
_BAR_STYLES = {"completed": "success", "failed": "danger", "paused": "warning"}
_NO_CURVES_YET = (
    "<span style='color:#888; font-size: 12px'>the loss and metric curves appear with the "
    "first steps</span>"
)


_charts_loaded = threading.Event()
_loader_lock = threading.Lock()
_loader: list[threading.Thread] = []


def _load_charts() -> None:
    try:
        import ludwig_nb.ui.charts.curve_chart  # noqa: F401  (bqplot, pandas)
    finally:
        _charts_loaded.set()  # a failed import fails again, with its error, where it is used


def bqplot_ready() -> bool:
    """Whether bqplot's charts are imported; if not, import them on a thread of their own.

    The pump never waits for the import (about a second on a first run, pandas included):
    until it is done, frames are drawn without the charts.
    """
    if _charts_loaded.is_set():
        return True
    with _loader_lock:
        if not _loader:
            _loader.append(
                threading.Thread(target=_load_charts, name="ludwig_nb-charts", daemon=True)
            )
            _loader[0].start()
    return _charts_loaded.is_set()


def bqplot_chart(title: str, y_label: str) -> Any:
    """A bqplot ``CurveChart``, imported when the first chart is made (bqplot loads pandas)."""
    from ludwig_nb.ui.charts.curve_chart import CurveChart

    return CurveChart(title, y_label)


def _merge(into: Writes, more: Writes) -> None:
    for widget, traits in more.items():
        into.setdefault(widget, {}).update(traits)


class Dashboard(RunView):
    """Live view of one run, read through the :class:`~ludwig_nb.runs.handle.RunHandle`.

    ``sampler``: a GPU sampler with ``latest() -> Snapshot | None`` (gauges and host
    CPU/RAM), or None to hide the gauges. ``clock``: wall-clock seconds (``time.time``),
    used for the ETA; the pump's ``now`` (monotonic) only throttles text refreshes.
    ``chart``: makes the two charts from ``(title, y_label)``; bqplot's ``CurveChart`` by
    default, ``ui.charts.svg_widgets.SvgCurveChart`` where only core widgets render (Colab).

    Args:
        run: The run shown.
        max_points: Points kept per curve.
    """

    def __init__(
        self,
        run: RunHandle,
        sampler: Any = None,
        clock: Callable[[], float] = time.time,
        max_points: int = 1000,
        chart: Callable[[str, str], Any] = bqplot_chart,
    ) -> None:
        super().__init__(run)  # closed once the last frame and its callbacks are done
        self._chart = chart
        self._sampler = sampler
        self._clock = clock
        self._lock = threading.Lock()
        self._final_drawn = False
        self._final_callbacks: list[Callable[[Dashboard], None]] = []
        self._log_requested = False
        self._traceback = ""
        self.curves = CurveData(max_points)
        self.eta = EtaText(run)
        self.throughput = ThroughputMeter()
        self.frames = 0
        self._charts: tuple[Any, Any] | None = None
        self.display_handle: Any = None  # the cell's display of it (ui/show.py sets it)
        self._build_widgets()

    # -- widgets ---------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.header = widgets.HTML(header_html(self.state))
        self.progress = widgets.FloatProgress(value=0.0, min=0.0, max=1.0)
        self.progress_label = widgets.HTML(progress_text(self.state))
        self.eta_label = widgets.HTML(f"ETA {self.eta.text}")
        self.throughput_label = widgets.HTML(
            format_throughput(None), layout=widgets.Layout(margin="0 0 0 16px")
        )
        self.pause_button = widgets.Button(description="Pause", icon="pause")
        self.resume_button = widgets.Button(description="Resume", icon="play", disabled=True)
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="danger")
        self.log_toggle = widgets.ToggleButton(value=False, description="log scale")
        self.pause_button.on_click(lambda _: self.run.pause())
        self.resume_button.on_click(lambda _: self.run.resume())
        self.stop_button.on_click(lambda _: self.run.stop())
        self.log_toggle.observe(self._on_log_toggle, names="value")
        self.x_toggle = widgets.ToggleButtons(
            options=[("step", "step"), ("epoch", "epoch"), ("time", "time")],
            value="step",
            tooltips=["steps done", "epochs", "elapsed time (s)"],
            style={"button_width": "64px"},
        )
        self.x_toggle.observe(self._on_x_toggle, names="value")
        self._x_requested = "step"
        self.alarms = widgets.HTML("")
        self.llm_panel = widgets.HTML("")  # an LLM run's model, tokens and samples
        self.mini_gauges = MiniGauges(self.run.device_index)
        self.gauges = self.mini_gauges.widget
        self.workers_row = WorkersRow()  # a distributed run's ranks (empty otherwise)
        self.error = widgets.HTML("")
        self.charts_row = widgets.HBox([widgets.HTML(_NO_CURVES_YET)])
        self.widget = widgets.VBox(
            [
                self.header,
                widgets.HBox([self.progress, self.progress_label]),
                widgets.HBox([self.eta_label, self.throughput_label]),
                widgets.HBox(
                    [
                        self.pause_button,
                        self.resume_button,
                        self.stop_button,
                        self.log_toggle,
                        self.x_toggle,
                    ]
                ),
                self.alarms,
                self.llm_panel,
                self.gauges,
                self.workers_row.widget,
                self.charts_row,
                self.error,
            ],
            layout=widgets.Layout(border="1px solid #ddd", padding="4px"),
        )
        self._add_classes()

    def _add_classes(self) -> None:
        """CSS classes (``lnb-*``) so that styles and browser tests find the parts."""
        for widget, name in (
            (self.widget, "lnb-dashboard"),
            (self.header, "lnb-header"),
            (self.progress, "lnb-progress"),
            (self.progress_label, "lnb-steps"),
            (self.eta_label, "lnb-eta"),
            (self.throughput_label, "lnb-throughput"),
            (self.pause_button, "lnb-pause"),
            (self.resume_button, "lnb-resume"),
            (self.stop_button, "lnb-stop"),
            (self.log_toggle, "lnb-log"),
            (self.x_toggle, "lnb-x-axis"),
            (self.alarms, "lnb-alarms"),
            (self.llm_panel, "lnb-llm"),
            (self.gauges, "lnb-gauges"),
            (self.error, "lnb-error-box"),
        ):
            widget.add_class(name)

    @property
    def loss_chart(self) -> Any:
        """The loss chart (made on first use)."""
        return self._ensure_charts()[0]

    @property
    def metric_chart(self) -> Any:
        """The validation metric chart (made on first use)."""
        return self._ensure_charts()[1]

    def _ensure_charts(self) -> tuple[Any, Any]:
        if self._charts is None:
            self._charts = (self._chart("loss", "loss"), self._chart("validation metric", "metric"))
            self.charts_row.children = (self._charts[0].widget, self._charts[1].widget)
        return self._charts

    def _on_log_toggle(self, change: dict[str, Any]) -> None:
        # runs on the kernel's main thread: only record the wish; the next frame applies it
        self._log_requested = bool(change["new"])

    def _on_x_toggle(self, change: dict[str, Any]) -> None:
        self._x_requested = str(change["new"])

    # -- view protocol ---------------------------------------------------------------
    def on_final(self, callback: Callable[[Dashboard], None]) -> None:
        """Call ``callback(dashboard)`` (on the refreshing thread) after the last frame."""
        self._final_callbacks.append(callback)

    def discard(self, timeout: float = 2.0) -> None:
        """Freeze without a last frame or its callbacks: the run was taken back (bad data).

        A last frame already being drawn finishes first (at most ``timeout`` seconds), so
        that whatever it publishes comes before the caller empties the display.
        """
        with self._lock:
            if not self._final_drawn:
                self._final_drawn = True
                self._final_callbacks.clear()
                self._close()
        self._closed.wait(timeout)

    def refresh(self, now: float) -> None:
        """Draw one frame: drain events, recompute, write changed traits in one batch."""
        with self._lock:
            if self._final_drawn:
                return
            for event in self._drain():
                self._observe(event)
            final = self.state.is_final
            self.eta.refresh(self.state, self._clock(), now, force=final)
            self._apply(self._frame_writes(final))
            self.frames += 1
            if not final:
                return
            self._subscription.close()
            self._final_drawn = True
        try:
            for callback in self._final_callbacks:
                callback(self)
        finally:
            # closed only after the callbacks: a cell waiting on wait_closed() (the
            # post_execute hook) then finds the summary they publish
            self._closed.set()

    def _observe(self, event: ev.Event) -> None:
        self.curves.observe(event)
        self.throughput.observe(event)
        if isinstance(event, ev.RunFailed):
            self._traceback = event.traceback

    # -- one frame -------------------------------------------------------------------
    def _frame_writes(self, final: bool) -> Writes:
        state = self.state
        color = STATUS_COLORS.get(state.status, "#757575")
        writes: Writes = {
            self.header: {"value": header_html(state)},
            self.progress: {
                "value": state.progress,
                "bar_style": _BAR_STYLES.get(state.status, "info"),
            },
            self.progress_label: {"value": progress_text(state)},
            self.eta_label: {"value": self._eta_html(state)},
            self.throughput_label: {
                "value": ""
                if state.status == "paused" or final
                else format_tokens_per_s(
                    self.throughput.tokens_per_s,
                    self.throughput.samples_per_s,
                    self.throughput.unit,
                    self.throughput.data_wait_share,
                )
            },
            self.llm_panel: {"value": llm_panel_html(state, self._gpu_memory_used())},
            self.pause_button: {
                "disabled": state.status not in _ACTIVE or state.status == "paused"
            },
            self.resume_button: {"disabled": state.status != "paused"},
            self.stop_button: {"disabled": state.status not in _ACTIVE},
            self.log_toggle: {"disabled": final},
            self.alarms: {
                "value": alarm_banner_html(state.alarms)
                + slowdown_html(state)
                + ("" if final else deadline_html(self.eta.deadline))
                + pace_html(state)
            },
        }
        _merge(writes, self._gauge_writes())
        _merge(writes, self.workers_row.writes(state.workers))
        if state.status == "failed":
            traceback = self._traceback or self.run.traceback_text
            writes[self.error] = {"value": error_html(state.error or state.reason, traceback)}
            writes[self.widget.layout] = {"border": f"2px solid {color}"}
        if self._charts is None and (
            final
            or not (state.step or state.evaluations)
            or (self._chart is bqplot_chart and not bqplot_ready())
        ):
            # nothing to draw yet, or bqplot still loading: the charts wait; at the end the
            # summary (SVG, from the curves) replaces the widget, so they are not made for it
            return writes
        x_mode = self._x_requested
        _merge(writes, self.loss_chart.scale_writes(self._log_requested))
        loss_curves = self.curves.loss_curves(x_mode)
        _merge(writes, self.loss_chart.writes(loss_curves, x_mode=x_mode, y_bounds=(0.0, None)))
        _merge(
            writes,
            self.metric_chart.writes(
                self.curves.metric_curves(x_mode),
                title=self.curves.metric_label,
                x_mode=x_mode,
                y_label=self.curves.metric_name,
                y_bounds=self.curves.metric_bounds,
            ),
        )
        return writes

    def _gpu_memory_used(self) -> int | None:
        """This run's GPU's memory in use (bytes) from the latest sample; None without one."""
        index = self.run.device_index
        latest = self._sampler.latest() if self._sampler is not None else None
        sample = latest.gpu(index) if latest is not None and index is not None else None
        if sample is None:
            return None
        used: int | None = (
            sample.process_memory if sample.process_memory is not None else sample.memory_used
        )
        return used

    def _eta_html(self, state: RunState) -> str:
        return html.escape(eta_line(state, self.eta.text))

    def _gauge_writes(self) -> Writes:
        """The GPU (or host CPU/RAM) gauge row from the sampler's latest snapshot."""
        if self._sampler is None:
            return {}
        try:
            snapshot = self._sampler.latest()
        except Exception:  # a sampler failure hides the gauges, never the dashboard
            snapshot = None
        # the run's device is known only once it has started (RunStarted): read it each frame
        self.mini_gauges.device_index = self.run.device_index
        return self.mini_gauges.writes(snapshot)

    def _apply(self, writes: Writes) -> None:
        """Set every changed trait; all widgets touched are held in one sync batch."""
        changed = {
            widget: {k: v for k, v in traits.items() if not _same(getattr(widget, k), v)}
            for widget, traits in writes.items()
        }
        changed = {w: t for w, t in changed.items() if t}
        with contextlib.ExitStack() as stack:
            for widget in changed:
                stack.enter_context(widget.hold_sync())
            for widget, traits in changed.items():
                for name, value in traits.items():
                    setattr(widget, name, value)

    # -- the static end state --------------------------------------------------------
    def summary_html(self) -> str:
        """The static HTML summary of the run as drawn so far (meant for the end)."""
        traceback = self._traceback or self.run.traceback_text
        return summary_html(
            self.state,
            self.curves,
            first_finish=self.eta.first_finish,
            traceback_text=traceback,
            directory=str(self.run.directory),
            resources=self.run.profile_summary,
        )


def _same(current: Any, new: Any) -> bool:
    """Trait equality that also works for numpy arrays (bqplot's x/y)."""
    if isinstance(new, list):
        try:
            return len(current) == len(new) and bool(
                all(a == b for a, b in zip(current, new, strict=True))
            )
        except TypeError:
            return False
    try:
        return bool(current == new)
    except (TypeError, ValueError):
        return False
