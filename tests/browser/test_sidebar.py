"""The sidebar in a real JupyterLab, in Debian's Chromium.

A notebook cell starts a run in the lab's kernel; the sidebar shows the (fake) GPU and the
run, its progress and ETA move, Stop ends it as "stopped", and a run named like an HTML
tag shows as text. The GPU comes from the fake ``libnvidia-ml.so.1``
(tests/fixtures/nvml) on the server's ``LD_LIBRARY_PATH``.

The run: the real ``ludwig_nb.train`` when the built-in engine and the ETA tracker can be
loaded (``SIDEBAR_RUN=real|standin`` forces one), otherwise
``StandinRun`` (below), which writes the registry entry, status.json and events.ndjson
exactly as the run layer does and honours control.json. The mode used is printed and is
part of the screenshot names.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState, reduce_state
from ludwig_nb.store import registry, rundir
from tests.browser.conftest import write_notebook

XSS_NAME = "<img src=x onerror=alert(1)>"
SIDEBAR = "#ludwig-nb-sidebar"


def _eta_words(remaining: float, now: float) -> str:
    """The ETA as a run words it in status.json (the sidebar shows it, words nothing)."""
    from ludwig_nb.core.eta import Estimate
    from ludwig_nb.core.eta.display import format_estimate

    estimate = Estimate(
        remaining_s=remaining,
        low_s=remaining * 0.9,
        high_s=remaining * 1.1,
        state="stable",
        at=now,
        step_s=0.1,
    )
    return format_estimate(estimate, now)


class StandinRun:
    """Writes what a training run writes, from a thread in the kernel; honours control.json.

    Used until ``ludwig_nb.train`` works end to end. ``step_seconds`` per step.
    """

    def __init__(self, name: str, total_steps: int = 600, step_seconds: float = 0.1) -> None:
        from jupyter_core.paths import jupyter_runtime_dir

        now = time.time()
        self.run_id = f"standin-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid():x}"
        self.directory = Path("results").resolve() / self.run_id
        self.directory.mkdir(parents=True)
        self.total_steps = total_steps
        self.step_seconds = step_seconds
        self.state = RunState()
        self.started = now
        from ipykernel import get_connection_file

        entry = registry.registry_entry(
            self.run_id,
            name,
            self.directory,
            os.getpid(),
            now,
            kernel=Path(get_connection_file()).stem.removeprefix("kernel-"),  # as a run does
            notebook=os.environ.get("JPY_SESSION_NAME"),
        )
        registry.register_run(registry.registry_dir(Path(jupyter_runtime_dir())), entry)
        schedule = ev.ScheduleInfo(
            total_steps=total_steps, steps_per_epoch=total_steps // 4, epochs=4, batch_size=32
        )
        self.emit(
            ev.RunStarted(
                time=now,
                run_id=self.run_id,
                name=name,
                engine="standin",
                device="cuda:0",
                schedule=schedule,
            )
        )
        import threading

        self.thread = threading.Thread(
            target=self._loop, name=f"ludwig_nb-run-{self.run_id}", daemon=True
        )
        self.thread.start()

    def emit(self, event: ev.Event) -> None:
        self.state = reduce_state(self.state, event)
        with open(self.directory / rundir.EVENTS_FILE, "a", encoding="utf-8") as handle:
            handle.write(event.to_json() + "\n")
        now = time.time()
        done = max(1, self.state.step)
        per_step = (now - self.started) / done
        remaining = per_step * (self.total_steps - self.state.step)
        eta = (
            None
            if self.state.is_final
            else {
                "remaining_s": remaining,
                "low_s": remaining * 0.9,
                "high_s": remaining * 1.1,
                "state": "stable",
                "finish_time": None,
            }
        )
        status = {
            **self.state.to_dict(),
            "eta": eta,
            "eta_text": "" if eta is None else _eta_words(remaining, now),
            "pid": os.getpid(),
            "written_at": now,
            "directory": str(self.directory),
        }
        rundir.write_json_atomic(self.directory / rundir.STATUS_FILE, status)

    def _control(self, step: int, paused_at: float | None) -> tuple[bool, float | None]:
        """Apply a pending control request: (stop now?, when the current pause began)."""
        request = rundir.consume_control(self.directory)
        action = request["action"] if request else None
        now = time.time()
        if action == "stop":
            self.emit(ev.RunFinished(now, "stopped", step, reason="sidebar"))
            return True, None
        if action == "pause" and paused_at is None:
            self.emit(ev.Paused(now, step, reason="control_file"))
            return False, now
        if action == "resume" and paused_at is not None:
            self.emit(ev.Resumed(now, step, paused_at, reason="control_file"))
            return False, None
        return False, paused_at

    def _loop(self) -> None:
        step = 0
        paused_at: float | None = None
        while step < self.total_steps:
            stop, paused_at = self._control(step, paused_at)
            if stop:
                return
            if paused_at is not None:
                time.sleep(self.step_seconds)  # paused: only poll control.json
                continue
            start = time.time()
            time.sleep(self.step_seconds)  # the "training" work
            epoch = step * 4 // self.total_steps
            loss = 1.0 / (1 + step)
            now = time.time()
            self.emit(ev.StepFinished(now, step, epoch, start, batch_size=32, loss=loss))
            if step % 25 == 24:
                metrics = {"validation": {"combined": {"loss": loss}}}
                self.emit(ev.EvaluationFinished(now, step, epoch, now, metrics, improved=True))
            step += 1
        self.emit(ev.RunFinished(time=time.time(), status="completed", step=step))


def _standin_module() -> str:
    header = (
        "from __future__ import annotations\n"
        "import os, time\nfrom pathlib import Path\n"
        "from ludwig_nb.core import events as ev\n"
        "from ludwig_nb.store import registry, rundir\n"
        "from ludwig_nb.core.state import RunState, reduce_state\n\n"
    )
    return header + inspect.getsource(_eta_words) + "\n\n" + inspect.getsource(StandinRun)


def _real_train_available() -> bool:
    """True when ``ludwig_nb.train`` can run and estimate an ETA (``$SIDEBAR_RUN`` overrides:
    ``real`` or ``standin``)."""
    forced = os.environ.get("SIDEBAR_RUN")
    if forced in ("real", "standin"):
        return forced == "real"
    try:
        from ludwig_nb.core.eta import EtaTracker  # noqa: F401 - the run writes no ETA without it
        from ludwig_nb.engines.registry import get_engine

        get_engine("builtin")
    except Exception:
        return False
    return True


REAL_CELL = f"""
import numpy as np, pandas as pd
import ludwig_nb
rng = np.random.default_rng(0)
df = pd.DataFrame({{"x": rng.normal(size=4000), "y": rng.normal(size=4000)}})
df["label"] = np.where(df.x + df.y > 0, "a", "b")
cfg = '''
input_features: [{{name: x, type: number}}, {{name: y, type: number}}]
output_features: [{{name: label, type: category}}]
trainer: {{epochs: 300, batch_size: 8, early_stop: -1}}
'''
run = ludwig_nb.train(cfg, df, name={XSS_NAME!r})
"""
STANDIN_CELL = f"""
from standin_run import StandinRun
run = StandinRun({XSS_NAME!r})
"""

#: a GPU that warms up past its slowdown threshold (tick = 1 s of wall time)
GPU_SCENARIO = {
    "tick_seconds": 1,
    "devices": [
        {
            "name": "Fake H100 80GB",
            "uuid": "GPU-fake-0",
            "temperature": [55, 62, 70, 78, 84, 86],
            "utilization_gpu": [5, 60, 95, 97],
            "memory_used": 34359738368,
            "memory_total": 85899345920,
            "power_mw": [90000, 350000, 640000],
            "power_limit_mw": 700000,
            "reasons": [1, 0, 0, 4],
            "thresholds": {"shutdown": 95, "slowdown": 87, "mem_max": 95, "gpu_max": 85},
            # the thermal margin to the nearest slowdown point (85 °C), a Hopper's GPM
            "margin": [30, 23, 15, 7, 1, -1],
            "tlimit": {"shutdown": -10, "slowdown": -2, "gpu_max": 0},
            "gpm": {"sm_util": [3, 55, 80, 82], "tensor_util": [0, 30, 45, 48]},
        }
    ],
}


@pytest.fixture(scope="module")
def fake_gpu_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str] | None:
    """os.environ plus the fake NVML on LD_LIBRARY_PATH; None when it cannot be built."""
    try:
        from tests.fixtures.nvml.build import build_fake_nvml, compiler_available, scenario_env
    except ImportError:
        return None
    if not compiler_available():
        return None
    out = tmp_path_factory.mktemp("nvml")
    lib = build_fake_nvml(out / "lib")
    scenario = out / "scenario.json"
    scenario.write_text(json.dumps(GPU_SCENARIO), encoding="utf-8")
    return scenario_env(lib.parent, scenario)


@pytest.fixture(scope="module")
def sidebar_lab(lab_server_factory, fake_gpu_env, tmp_path_factory):
    root = tmp_path_factory.mktemp("sidebar-root")
    real = _real_train_available()
    write_notebook(root / "run.ipynb", [REAL_CELL if real else STANDIN_CELL])
    (root / "standin_run.py").write_text(_standin_module(), encoding="utf-8")
    server = lab_server_factory(
        root,
        env=fake_gpu_env,
        settings={"ludwig-nb/plugin": {"refreshInterval": 0.5}},
        name="sidebar",
    )
    return server, ("real" if real else "standin"), fake_gpu_env is not None


def _register_script_run(runtime_dir: Path, root: Path, run_id: str, status: str) -> None:
    """A run another process (a script, the CLI) registered with this user's registry: no kernel.

    Its pid is this test's process, so it is alive; ``status`` says whether it has ended.
    """
    directory = root / "script-results" / run_id
    directory.mkdir(parents=True)
    now = time.time()
    rundir.write_json_atomic(
        directory / rundir.STATUS_FILE,
        {"run_id": run_id, "name": run_id, "status": status, "step": 3, "total_steps": 10},
    )
    entry = registry.registry_entry(run_id, run_id, directory, os.getpid(), now)
    registry.register_run(registry.registry_dir(runtime_dir), entry)


def _run_text(item: Any, part: str) -> str:
    return str(item.locator(f".jp-LudwigNb-run-{part}").inner_text())


def test_sidebar_shows_gpu_and_run_and_stops_it(sidebar_lab, lab_page, artifacts_dir, kernel_idle):
    from playwright.sync_api import expect

    server, mode, has_gpu = sidebar_lab
    print(f"run mode: {mode}; fake GPU: {has_gpu}")
    _register_script_run(server.runtime_dir, server.root_dir, "script-live-1", "training")
    _register_script_run(server.runtime_dir, server.root_dir, "script-done-1", "completed")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/run.ipynb")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    kernel_idle(page)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.evaluate("() => window.jupyterapp.shell.activateById('ludwig-nb-sidebar')")
    sidebar = page.locator(SIDEBAR)
    expect(sidebar).to_be_visible(timeout=15_000)

    # the GPU card (or the host card when the fake driver could not be built)
    card = sidebar.locator(".jp-LudwigNb-card").first
    if has_gpu:
        expect(card).to_contain_text("GPU 0", timeout=20_000)
        expect(card).to_contain_text("Fake H100 80GB")
        temperature = card.locator('[data-meter="temperature"]')
        expect(temperature).to_contain_text(re.compile(r"°C · (\d+ °C to|at its|\d+ °C past) slow"))
        expect(temperature).to_have_attribute("title", re.compile(r"slowdown 87 °C · shutdown 95"))
        utilisation = card.locator('[data-meter="utilisation"]')
        expect(utilisation).to_contain_text(re.compile(r"SM \d+ % · tensor \d+ %"), timeout=10_000)
        expect(utilisation).to_have_attribute("title", re.compile("any kernel ran"))
    else:
        expect(card).to_contain_text("Host", timeout=20_000)

    # the run started by the notebook cell, its name shown literally
    item = sidebar.locator("li.jp-LudwigNb-run").first
    expect(item).to_be_visible(timeout=60_000)
    expect(item.locator(".jp-LudwigNb-run-name")).to_have_text(XSS_NAME)
    assert sidebar.locator("img").count() == 0
    expect(item.locator(".jp-LudwigNb-run-eta")).to_contain_text(
        re.compile(r"ETA [≈≤] \d"), timeout=60_000
    )
    progress_before = _run_text(item, "progressText")
    eta_before = _run_text(item, "eta")
    page.screenshot(path=str(artifacts_dir / f"sidebar_running_{mode}.png"))
    expect(item.locator(".jp-LudwigNb-run-progressText")).not_to_have_text(
        progress_before, timeout=20_000
    )
    expect(item.locator(".jp-LudwigNb-run-eta")).not_to_have_text(eta_before, timeout=20_000)

    if has_gpu:  # the scenario heats the card past slowdown - 5 °C: amber, then red
        expect(card).to_have_class(re.compile(r"jp-LudwigNb-level-(warn|alarm)"), timeout=20_000)
        sidebar.locator(".jp-LudwigNb-card").first.screenshot(
            path=str(artifacts_dir / f"sidebar_gpu_card_{mode}.png")
        )

    # by default this server's notebook runs come first; another process's live run waits in a
    # folded group, with its process named and Stop kept; its finished run shows only under "all"
    groups = sidebar.locator("li.jp-LudwigNb-group")
    expect(groups).to_have_text(["▾ this server's notebooks (1)", "▸ other processes: live (1)"])
    script_rows = sidebar.locator("li.jp-LudwigNb-run", has_text="script-")
    expect(script_rows).to_have_count(0)
    groups.nth(1).locator("button").click()
    expect(script_rows).to_have_count(1)
    expect(script_rows.locator(".jp-LudwigNb-run-where")).to_have_text(
        f"a script or the CLI · process {os.getpid()}"
    )
    expect(script_rows.locator("button[data-action=stop]")).to_be_enabled()
    page.screenshot(path=str(artifacts_dir / f"sidebar_groups_{mode}.png"))

    # "this notebook" lists the run: the sidebar follows the document in focus (JupyterLab's
    # shell names it); with no document known the filter would list nothing
    run_filter = sidebar.locator("select.jp-LudwigNb-filter")
    run_filter.select_option("notebook")
    expect(item.locator(".jp-LudwigNb-run-name")).to_have_text(XSS_NAME)
    run_filter.select_option("all")
    expect(groups.nth(2)).to_have_text("▾ other processes: finished (1)")
    expect(script_rows).to_have_count(2)
    expect(item.locator(".jp-LudwigNb-run-name")).to_have_text(XSS_NAME)  # still listed first

    item.locator("button[data-action=pause]").click()
    expect(item.locator(".jp-LudwigNb-run-status")).to_have_text("paused", timeout=30_000)
    expect(item.locator(".jp-LudwigNb-run-eta")).to_contain_text("paused")
    item.locator("button[data-action=resume]").click()
    expect(item.locator(".jp-LudwigNb-run-status")).to_have_text("training", timeout=30_000)

    item.locator("button[data-action=stop]").click()
    expect(item.locator(".jp-LudwigNb-run-status")).to_have_text("stopped", timeout=30_000)
    expect(item.locator("button[data-action=stop]")).to_be_hidden()  # nothing to control any more
    page.screenshot(path=str(artifacts_dir / f"sidebar_stopped_{mode}.png"))

    assert page.dialogs == [], page.dialogs  # the onerror handler never ran
    errors = [m for m in page.console_messages if "ludwig-nb" in m.lower() and "error" in m.lower()]
    assert errors == []
    folder = registry.registry_dir(server.runtime_dir)
    [entry] = [e for e in registry.iter_registry(folder) if e["name"] == XSS_NAME]
    status = rundir.read_json(Path(entry["directory"]) / rundir.STATUS_FILE)
    assert status is not None and status["status"] == "stopped"


def test_sidebar_without_gpu_shows_the_host(lab_server_factory, lab_page, artifacts_dir, tmp_path):
    """No NVML on the server (this machine's real state): a host CPU/RAM card and the reason."""
    from playwright.sync_api import expect

    env = {
        k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_SCENARIO")
    }
    server = lab_server_factory(tmp_path, env=env, name="sidebar-host")
    page = lab_page
    page.goto(f"{server.url}/lab")
    page.wait_for_selector(".jp-SideBar.jp-mod-left", timeout=60_000)
    page.locator('.jp-SideBar.jp-mod-left [data-id="ludwig-nb-sidebar"]').click()
    sidebar = page.locator(SIDEBAR)
    expect(sidebar.locator(".jp-LudwigNb-gpuMessage")).to_contain_text("No GPU", timeout=20_000)
    card = sidebar.locator(".jp-LudwigNb-card").first
    expect(card).to_contain_text("Host")
    expect(card.locator('[data-meter="cpu"]')).to_contain_text(re.compile(r"\d+ %"))
    expect(card.locator('[data-meter="ram"]')).to_contain_text("GiB")
    expect(sidebar.locator(".jp-LudwigNb-empty")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "sidebar_host_only.png"))
    server.stop()
