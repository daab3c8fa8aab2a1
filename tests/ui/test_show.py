"""show_run in each mode (widgets, Colab, text) on virtual time, and shutdown."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.ui import show
from ludwig_nb.ui.dashboard import Dashboard
from ludwig_nb.ui.pump import Pump
from ludwig_nb.ui.text_view import TextView
from tests.ui.conftest import T0, FakeRun, started, steps


class FakeHandle:
    def __init__(self, obj: Any) -> None:
        self.shown = obj
        self.updates: list[dict[str, str]] = []

    def update(self, bundle: dict[str, str], raw: bool = False) -> None:
        assert raw
        self.updates.append(bundle)


@pytest.fixture
def handles(monkeypatch: pytest.MonkeyPatch) -> list[FakeHandle]:
    shown: list[FakeHandle] = []

    def display(obj: Any, metadata: Any = None) -> FakeHandle:
        shown.append(FakeHandle(obj))
        shown[-1].metadata = metadata
        return shown[-1]

    monkeypatch.setattr(show, "_display", display)
    monkeypatch.setattr(show, "_shell", lambda: None)
    return shown


@pytest.fixture
def manual_pump(monkeypatch: pytest.MonkeyPatch) -> Iterator[Pump]:
    """The shared pump, with frames driven by the test instead of a thread."""
    pump = Pump(fps=4, clock=lambda: 0.0)
    monkeypatch.setattr(pump, "start", lambda: None)
    monkeypatch.setattr(show._ui, "pump", pump)
    yield pump
    show.shutdown()


def test_detect_mode() -> None:
    kernel_shell = types.SimpleNamespace(kernel=object())
    terminal_shell = types.SimpleNamespace()
    assert show.detect_mode(kernel_shell, modules={}) == "widgets"
    assert show.detect_mode(terminal_shell, modules={}) == "text"
    assert show.detect_mode(kernel_shell, modules={"google.colab": object()}) == "colab"


def test_unknown_mode_is_one_short_error(run: FakeRun) -> None:
    with pytest.raises(ValueError, match="mode must be one of auto, widgets, colab, text"):
        show.show_view(run, mode="fancy")


def test_widgets_mode_replaces_the_dashboard_with_the_summary(
    run: FakeRun, handles: list[FakeHandle], manual_pump: Pump
) -> None:
    dash = show.show_view(run, mode="widgets", sampler=None)
    assert isinstance(dash, Dashboard)
    assert (
        handles[0].shown["application/vnd.jupyter.widget-view+json"]["model_id"]
        == dash.widget.model_id
    )
    assert manual_pump.views == [dash]
    fallback = handles[0].shown["text/html"]  # readable where the widget cannot render
    assert "ludwig-nb-snapshot" in fallback and str(run.directory) in fallback
    # the model id lets a reloaded page put the live widget back (labextension notebook_refresh)
    assert handles[0].metadata == {
        "ludwig_nb": {
            "run_id": run.id,
            "directory": str(run.directory),
            "model_id": dash.widget.model_id,
        }
    }
    run.emit(started(run), *steps(0, 10, T0))
    manual_pump.frame(1.0)
    assert handles[0].updates == []
    run.emit(ev.RunFinished(time=T0 + 2, status="stopped", step=10, reason="user"))
    manual_pump.frame(1.25)
    assert manual_pump.views == []
    [bundle] = handles[0].updates
    assert 'data-status="stopped"' in bundle["text/html"] and "<svg" in bundle["text/html"]
    assert bundle["text/plain"].startswith("demo: stopped")
    show._await_final_frames()  # the next cell's post_execute publishes it once more
    show._await_final_frames()
    assert handles[0].updates == [bundle, bundle]


def test_text_mode_updates_at_most_once_a_second(
    run: FakeRun, handles: list[FakeHandle], manual_pump: Pump
) -> None:
    view = show.show_view(run, mode="text")
    assert isinstance(view, TextView)
    assert view.min_interval == 10.0  # no kernel: a terminal, where each update prints
    view.min_interval = 1.0
    run.emit(started(run), *steps(0, 5, T0))
    manual_pump.frame(0.0)
    run.emit(*steps(5, 5, T0 + 0.5))
    manual_pump.frame(0.5)  # changed, but too soon
    handle = handles[0]
    assert len(handle.updates) == 1 and "step 5 / 100" in handle.updates[0]["text/plain"]
    assert "<progress" in handle.updates[0]["text/html"]
    manual_pump.frame(1.0)
    assert len(handle.updates) == 2 and "step 10 / 100" in handle.updates[1]["text/plain"]
    run.emit(ev.RunFinished(time=T0 + 2, status="completed", step=100))
    manual_pump.frame(1.1)  # the end is shown at once
    assert handle.updates[-1]["text/plain"].startswith("demo: completed")
    assert "<svg" in handle.updates[-1]["text/html"]
    assert view.closed and manual_pump.views == []


class StoppableRun(FakeRun):
    """Stopping ends the run at once, as the engine would at its next step boundary."""

    def stop(self, reason: str = "user") -> None:
        super().stop(reason)
        self.emit(ev.RunFinished(time=T0 + 3, status="stopped", step=self.step, reason=reason))


def _widget_modules(widget: Any) -> set[str]:
    """The model modules of ``widget`` and everything inside it."""
    modules = {widget._model_module}
    for child in getattr(widget, "children", ()):
        modules |= _widget_modules(child)
    return modules


def test_colab_mode_core_widgets_main_thread_pump_and_interrupt_stops(
    handles: list[FakeHandle], monkeypatch: pytest.MonkeyPatch, fake_colab: Any
) -> None:
    import signal

    from ludwig_nb.ui.charts.svg_widgets import SvgCurveChart

    sleeps: list[float] = []

    def interrupting_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            signal.raise_signal(signal.SIGINT)  # the user interrupts the kernel mid-run

    monkeypatch.setattr(
        show, "_blocking_pump", lambda fps: Pump(fps, clock=lambda: 0.0, sleep=interrupting_sleep)
    )
    run = StoppableRun()
    run.emit(started(run), *steps(0, 10, T0))
    dash = show.show_view(run, sampler=None)  # auto -> colab (google.colab importable)
    from google.colab.output import _widgets

    assert _widgets.enable_calls == 0  # no CDN widget manager needed
    assert isinstance(dash.loss_chart, SvgCurveChart)
    assert _widget_modules(dash.widget) == {"@jupyter-widgets/controls"}
    assert run.calls == ["stop:interrupt"]
    assert dash.closed and dash.state.status == "stopped"
    notice, dashboard = handles
    assert "Why this cell stays busy" in notice.shown["text/html"]
    assert 'data-status="stopped"' in dashboard.updates[-1]["text/html"]
    again = StoppableRun(name="again")
    again.emit(started(again), ev.RunFinished(time=T0 + 1, status="completed", step=0))
    show.show_view(again, sampler=None)
    assert len(handles) == 3  # the notice is shown once per kernel


def test_colab_opt_in_to_bqplot_enables_the_widget_manager(
    handles: list[FakeHandle], fake_colab: Any
) -> None:
    from ludwig_nb.ui.charts.curve_chart import CurveChart

    run = FakeRun()
    run.emit(started(run), ev.RunFinished(time=T0 + 1, status="completed", step=0))
    dash = show.show_view(run, sampler=None, charts="bqplot")
    from google.colab.output import _widgets

    assert _widgets.enable_calls == 1 and isinstance(dash.loss_chart, CurveChart)


def test_colab_background_mode_uses_the_shared_pump(
    handles: list[FakeHandle], manual_pump: Pump, fake_colab: Any
) -> None:
    run = FakeRun()
    run.emit(started(run), *steps(0, 10, T0))
    dash = show.show_view(run, sampler=None, block=False)  # the cell returns at once
    assert manual_pump.views == [dash] and len(handles) == 1  # no blocking notice
    manual_pump.frame()
    assert dash.progress_label.value.startswith("step 10 / 100")


def test_block_pumps_on_the_calling_thread(
    handles: list[FakeHandle], manual_pump: Pump, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    run = FakeRun()

    def sleep(seconds: float) -> None:  # the run advances while the cell blocks
        sleeps.append(seconds)
        run.emit(ev.RunFinished(time=T0 + 3, status="completed", step=100))

    monkeypatch.setattr(
        show, "_blocking_pump", lambda fps: Pump(fps, clock=lambda: 0.0, sleep=sleep)
    )
    run.emit(started(run), *steps(0, 100, T0))
    dash = show.show_view(run, mode="widgets", sampler=None, block=True)
    assert dash.closed and dash.progress.value == 1.0
    assert set(sleeps) == {0.25}  # frame intervals at 4 frames/s
    assert manual_pump.views == []  # the shared pump was not involved
    assert 'data-status="completed"' in handles[0].updates[-1]["text/html"]


def test_shutdown_stops_the_pump_but_not_the_run(run: FakeRun, handles: list[FakeHandle]) -> None:
    pump = show.shared_pump()
    pump.start()
    assert show.show_run(run, mode="widgets", sampler=None) is None
    assert pump.running
    show.shutdown()
    assert not pump.running and pump.views == []
    assert run.calls == [] and show.shared_pump() is not pump
    show.shutdown()


# -- through a real kernel: the saved notebook keeps the summary --------------------------------
_KERNEL_CELLS = [
    """import sys, threading, time
sys.path.insert(0, {root!r})
from ludwig_nb.core import events as ev
from ludwig_nb.ui import show_run
from tests.ui.conftest import FakeRun, started, steps

run = FakeRun("kernel-demo")

def train():  # stands in for the engine's thread: events only, never a widget
    t0 = time.time()
    run.emit(started(run, t0))
    for i in range(0, 100, 10):
        time.sleep(0.05)
        run.emit(*steps(i, 10, time.time() - 0.05, step_s=0.005))
    run.emit(ev.RunFinished(time=time.time(), status="completed", step=100))

threading.Thread(target=train, daemon=True).start()
dash = show_run(run)""",
    "run.wait(30)\nprint(run.status)",
]


@pytest.mark.slow
def test_saved_notebook_keeps_the_summary(tmp_path: Any) -> None:
    import pathlib

    import nbformat
    from nbclient import NotebookClient

    root = str(pathlib.Path(__file__).resolve().parents[2])
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.format(root=root)) for c in _KERNEL_CELLS]
    NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = nb.cells[0].outputs
    htmls = [o["data"].get("text/html", "") for o in outputs if o["output_type"] == "display_data"]
    assert any("ludwig-nb-summary" in h and "<svg" in h for h in htmls), outputs
    assert "completed" in nb.cells[1].outputs[0]["text"]
