"""The Colab profile end to end: the magics in a real IPython shell and in a real ipykernel
kernel (jupyter_client, nbclient), with the fake ``google.colab`` of tests/fixtures/colab.

scripts/ci/test_colab.sh runs these in a venv with exactly Colab's pins (IPython 7.34.0,
ipykernel 6.17.1, ipywidgets 7.7.1, jupyter-server 2.14.0, tornado 6.5.1); the main suite
runs them too, on its newer stack. What they cannot show: Colab's front end.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from ludwig_nb.ipython.placeholder import EMPTY
from tests.ui.conftest import FAKE_COLAB, forget_colab

REPO = Path(__file__).resolve().parents[2]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
CORE_MODULES = {"@jupyter-widgets/controls", "@jupyter-widgets/base", "@jupyter-widgets/output"}

# long enough that an interrupt always lands mid-run (early stopping off)
LONG_RUN = """\
input_features:
  - {name: total_day_minutes, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
trainer: {epochs: 2000, batch_size: 32, early_stop: -1}
"""


@pytest.fixture
def colab_shell(ip: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The real IPython shell with ``google.colab`` importable (and forgotten afterwards)."""
    from ludwig_nb.ui.colab import _reset_notice

    forget_colab()
    monkeypatch.syspath_prepend(str(FAKE_COLAB))
    _reset_notice()
    yield ip
    forget_colab()
    _reset_notice()


class InterruptAfterFrames:
    """A view on the blocking pump that records the dashboard's progress each frame and
    sends the process SIGINT (the kernel's Interrupt) once it has seen ``frames`` frames
    with progress, so the interrupt lands while the cell runs and training goes on."""

    def __init__(self, pump: Any, frames: int = 3) -> None:
        self.pump = pump
        self.frames = frames
        self.progress: list[float] = []
        self.threads: set[str] = set()
        self.closed = False

    def refresh(self, now: float) -> None:
        self.threads.add(threading.current_thread().name)
        dashboards = [v for v in self.pump.views if v is not self and hasattr(v, "progress")]
        if not dashboards:
            return
        value = dashboards[0].progress.value
        if value > 0 and (not self.progress or value > self.progress[-1]):
            self.progress.append(value)
        if len(self.progress) >= self.frames:
            self.closed = True
            signal.raise_signal(signal.SIGINT)


def test_ludwig_config_in_colab_blocks_pumps_and_interrupt_stops(
    colab_shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ludwig_nb.ui import show
    from ludwig_nb.ui.charts.svg_widgets import SvgCurveChart
    from ludwig_nb.ui.pump import Pump

    probes: list[InterruptAfterFrames] = []

    def blocking_pump(fps: float) -> Pump:
        pump = Pump(fps=fps)
        probes.append(InterruptAfterFrames(pump))
        pump.add(probes[-1])
        return pump

    dashboards: list[Any] = []
    make_dashboard = show._dashboard

    def recording_dashboard(*args: Any) -> Any:
        dashboards.append(make_dashboard(*args))
        return dashboards[-1]

    monkeypatch.setattr(show, "_blocking_pump", blocking_pump)
    monkeypatch.setattr(show, "_dashboard", recording_dashboard)
    with capture_output() as captured:
        result = colab_shell.run_cell(
            "%%ludwig_config --dataset demo:churn --name churn\n" + LONG_RUN
        )
    assert result.success, result.error_in_exec
    run = colab_shell.user_ns["churn"]
    assert run.is_done and run.status == "stopped"  # graceful: no KeyboardInterrupt escaped
    assert 0 < run.step < run.total_steps
    assert len(probes[0].progress) >= 3  # frames drawn while the cell ran ...
    assert probes[0].threads == {threading.main_thread().name}  # ... on the main thread
    shown = [o.data for o in captured.outputs]
    assert "Colab draws widget updates only while a cell runs" in shown[0]["text/plain"]
    assert WIDGET_MIME in shown[1]  # the dashboard
    assert shown[-1]["text/plain"].startswith("churn: stopped")  # the cell ends as the summary
    assert 'data-status="stopped"' in shown[-1]["text/html"]
    (dashboard,) = dashboards
    assert isinstance(dashboard.loss_chart, SvgCurveChart)
    assert _model_modules(dashboard.widget) <= CORE_MODULES
    assert dashboard.closed and dashboard.state.status == "stopped"


def _model_modules(widget: Any) -> set[str]:
    modules = {widget._model_module}
    for child in getattr(widget, "children", ()):
        modules |= _model_modules(child)
    return modules


# -- a real ipykernel kernel -------------------------------------------------------------
@pytest.fixture
def colab_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A real kernel (this Python's ``python3`` kernel spec) that can import the fake
    ``google.colab`` and this checkout, in a scratch working directory."""
    from jupyter_client.manager import start_new_kernel

    path = os.pathsep.join([str(FAKE_COLAB), str(REPO), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


class Cell:
    """What a kernel sent for one execute request: outputs, widget comms and the reply."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []  # display_data, update_display_data, ...
        self.models: dict[str, dict[str, Any]] = {}  # comm id -> widget state at comm_open
        self.updates: dict[str, list[dict[str, Any]]] = {}  # comm id -> update states
        self.reply: dict[str, Any] = {}

    def progress_values(self) -> list[float]:
        bars = [c for c, s in self.models.items() if s.get("_model_name") == "FloatProgressModel"]
        return [u["value"] for c in bars for u in self.updates.get(c, []) if "value" in u]


def execute(kc: Any, code: str, on_message: Any = None, timeout: float = 300.0) -> Cell:
    """Run ``code`` and collect its iopub traffic until the kernel is idle again."""
    cell = Cell()
    msg_id = kc.execute(code)
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open":
            cell.models[content["comm_id"]] = content["data"].get("state", {})
        elif kind == "comm_msg" and content["data"].get("method") == "update":
            cell.updates.setdefault(content["comm_id"], []).append(content["data"]["state"])
        elif kind in ("display_data", "update_display_data", "execute_result", "stream", "error"):
            cell.outputs.append({"type": kind, **content})
        elif kind == "status" and content["execution_state"] == "idle":
            break
        if on_message is not None:
            on_message(cell)
    cell.reply = kc.get_shell_msg(timeout=timeout)["content"]
    return cell


def _html(cell: Cell) -> list[str]:
    return [o.get("data", {}).get("text/html", "") for o in cell.outputs]


def _without_placeholder(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outputs less the placeholder line (ipython/placeholder.py) and its updates."""
    ids = {
        o.get("transient", {}).get("display_id")
        for o in outputs
        if "ludwig-nb-placeholder" in o.get("data", {}).get("text/html", "")
    }
    return [o for o in outputs if o.get("transient", {}).get("display_id") not in ids]


def test_in_a_real_kernel_colab_cell_pumps_frames_and_interrupt_ends_it_stopped(
    colab_kernel: Any,
) -> None:
    km, kc = colab_kernel
    setup = execute(kc, "%load_ext ludwig_nb\nimport ludwig_nb")
    assert setup.reply["status"] == "ok", setup.outputs
    _check_pins_in_the_kernel(kc)
    interrupted: list[int] = []

    def interrupt_after_three_frames(cell: Cell) -> None:
        if not interrupted and len(set(cell.progress_values()) - {0.0}) >= 3:
            interrupted.append(len(cell.progress_values()))
            km.interrupt_kernel()  # SIGINT to the kernel, as Colab's Interrupt button does

    train = execute(
        kc,
        "%%ludwig_config --dataset demo:churn --name churn\n" + LONG_RUN,
        on_message=interrupt_after_three_frames,
    )
    assert interrupted, "the cell ended before three frames arrived"
    assert train.reply["status"] == "ok", train.outputs  # graceful: no KeyboardInterrupt
    values = train.progress_values()
    assert values == sorted(values) and len(set(values)) >= 3  # frames while the cell ran
    modules = {s.get("_model_module") for s in train.models.values()}
    assert modules <= CORE_MODULES, modules  # core ipywidgets only: no bqplot, no CDN
    assert "ludwig-nb-placeholder" in _html(train)[0]  # the first output, at once
    notice, dashboard = _without_placeholder(train.outputs)[:2]
    assert "Why this cell stays busy" in notice["data"]["text/html"]
    assert WIDGET_MIME in dashboard["data"]
    assert train.outputs[-1]["type"] == "update_display_data"  # the dashboard's display ...
    assert 'data-status="stopped"' in _html(train)[-1]  # ... ends as the static summary

    later = execute(kc, "ludwig_nb.show(churn)\nprint(churn.wait() is churn, churn.status)")
    assert later.reply["status"] == "ok", later.outputs
    assert not any("Why this cell stays busy" in h for h in _html(later))  # once per kernel
    assert 'data-status="stopped"' in _html(later)[-2]  # a new dashboard, caught up, final
    assert later.outputs[-1]["text"].strip() == "True stopped"


def _check_pins_in_the_kernel(kc: Any) -> None:
    """Under scripts/ci/test_colab.sh (``LUDWIG_NB_COLAB_PINS`` names the pins file) the kernel
    runs exactly Colab's versions; elsewhere it only reports them."""
    code = (
        "from importlib.metadata import version\n"
        "print(' '.join(f'{n}=={version(n)}' for n in "
        "('ipython', 'ipykernel', 'ipywidgets', 'jupyter-server', 'tornado')))"
    )
    cell = execute(kc, code)
    seen = set(cell.outputs[-1]["text"].split())
    pins_file = os.environ.get("LUDWIG_NB_COLAB_PINS")
    if pins_file:
        lines = Path(pins_file).read_text().splitlines()
        pins = {line.split("#")[0].strip() for line in lines} - {""}
        assert seen == pins, f"the kernel runs {sorted(seen)}, Colab pins {sorted(pins)}"
    else:
        assert len(seen) == 5


def test_the_colab_notebook_runs_under_nbclient_in_the_colab_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat
    from nbclient import NotebookClient

    path = os.pathsep.join([str(FAKE_COLAB), str(REPO), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    nb = nbformat.read(REPO / "notebooks" / "05_colab.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    cells = {c.source.splitlines()[0]: c for c in nb.cells if c.cell_type == "code"}
    install = cells[
        "# Install ludwig_nb into Colab's kernel (skipped where it is already installed)."
    ]
    assert install.outputs == []  # importable here: no pip run
    train = cells["%%ludwig_config --dataset demo:churn --name churn"]
    texts = [o["data"]["text/plain"] for o in train.outputs if o.get("data") != EMPTY]
    assert texts[0].startswith("ludwig_nb: Colab draws widget updates only while a cell runs")
    assert texts[-1].startswith("churn: completed")  # the blocking cell ended as the summary
    assert cells["churn.wait().status"].outputs[0]["data"]["text/plain"] == "'completed'"
    assert cells["churn_bg.wait().status"].outputs[0]["data"]["text/plain"] == "'completed'"
    assert "stopped 1 GPU watch" in cells["%gpu_watch --stop"].outputs[0]["text"]
    assert (tmp_path / "results").is_dir()
