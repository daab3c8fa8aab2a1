"""A notebook reopened after its runs went on without it, in a real JupyterLab in Chromium.

Two real runs (built-in engine, CPU) show their dashboards; the notebook is saved while
both train (the server's pre-save hook puts a snapshot of each run in the file, status
"training") and its tab is closed. One run completes while the tab is closed; then the
kernel is shut down while the other still trains. Reopened, the notebook must show
neither a dead widget nor the stale "training" snapshot: the sidebar extension replaces
each snapshot with the run's current one from its run directory ("completed" with its
metrics beside the baseline; "interrupted", saying its process ended), and saving
again puts those in the file.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ludwig_nb.store import registry, rundir
from tests.browser.conftest import wait_for_kernel_idle, write_notebook

pytestmark = pytest.mark.slow

SETUP = """\
import tempfile
import numpy as np
import pandas as pd
from ludwig_nb.runs import train
from ludwig_nb.ui import show_run

rng = np.random.default_rng(0)
n = 4000
df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n)})
df["label"] = np.where(df.x + df.y + rng.normal(scale=0.5, size=n) > 0, "yes", "no")
FEATURES = '''
input_features: [{name: x, type: number}, {name: y, type: number}]
output_features: [{name: label, type: category}]
'''
results = tempfile.mkdtemp()"""
ENDS = (
    'ends = train(FEATURES + "trainer: {epochs: 40, batch_size: 16, early_stop: -1}", df,\n'
    '             name="ends-while-closed", results_dir=results)\nshow_run(ends)'
)
DIES = (
    'dies = train(FEATURES + "trainer: {epochs: 5000, batch_size: 16, early_stop: -1}", df,\n'
    '             name="kernel-dies", results_dir=results)\nshow_run(dies)'
)
WIDGET = "application/vnd.jupyter.widget-view+json"


def _saved_runs(path: Path) -> dict[str, dict[str, Any]]:
    """``{run name: {"status", "data"}}`` of the ludwig_nb outputs in the saved file."""
    found = {}
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("ludwig_nb")
            if meta:
                name = output["data"].get("text/plain", "").split(":")[0]
                found[name] = {"status": meta.get("status"), "data": output["data"]}
    return found


def _status(server: Any, name: str) -> dict[str, Any]:
    for entry in registry.iter_registry(registry.registry_dir(server.runtime_dir)):
        if entry.get("name") == name:
            return rundir.read_json(Path(entry["directory"]) / rundir.STATUS_FILE) or {}
    return {}


LIVE = {"training", "evaluating"}  # a live run saved mid-step or mid-evaluation


def _wait_status(server: Any, name: str, statuses: set[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _status(server, name).get("status") not in statuses:
        assert time.monotonic() < deadline, f"{name} never reached {statuses}"
        time.sleep(0.5)  # waiting on a real run, not a timed assertion


def _save(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )


def test_reopened_notebook_shows_the_runs_final_state(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    path = write_notebook(root / "reopen.ipynb", (SETUP, ENDS, DIES))
    server = lab_server_factory(root, name="reopen")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/reopen.ipynb?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expect(page.locator(".lnb-dashboard")).to_have_count(2, timeout=120_000)
    wait_for_kernel_idle(page, 120_000)
    _wait_status(server, "ends-while-closed", LIVE, 120)
    _wait_status(server, "kernel-dies", LIVE, 120)

    # saved while both train: snapshots in the file, "training", no widget
    _save(page)
    saved = _saved_runs(path)
    assert {saved[n]["status"] for n in ("ends-while-closed", "kernel-dies")} <= LIVE
    assert all(WIDGET not in s["data"] for s in saved.values())
    page.evaluate("() => window.jupyterapp.shell.currentWidget.dispose()")  # tab closed
    expect(page.locator(".jp-Notebook")).to_have_count(0, timeout=30_000)

    # one run ends while the tab is closed; then the kernel goes while the other trains
    _wait_status(server, "ends-while-closed", {"completed"}, 300)
    page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    with urllib.request.urlopen(f"{server.url}/api/sessions", timeout=10) as reply:
        assert json.load(reply) == []  # the kernel is gone
    assert _saved_runs(path)["ends-while-closed"]["status"] in LIVE  # the file is stale

    # reopened: each snapshot is the run's state now, from its run directory
    page.evaluate(
        "() => window.jupyterapp.commands.execute('docmanager:open', {path: 'reopen.ipynb'})"
    )
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    done = page.locator('.ludwig-nb-snapshot[data-status="completed"]')
    expect(done).to_have_count(1, timeout=60_000)
    expect(done).to_contain_text("ends-while-closed: completed")
    expect(done).to_contain_text("always")  # the metrics beside the trivial baseline
    gone = page.locator('.ludwig-nb-snapshot[data-status="interrupted"]')
    expect(gone).to_have_count(1, timeout=60_000)
    expect(gone).to_contain_text("its process ended before the run did")
    for live in sorted(LIVE):  # no stale live snapshot is left
        expect(page.locator(f'.ludwig-nb-snapshot[data-status="{live}"]')).to_have_count(0)
    assert page.get_by_text("Error displaying widget").count() == 0
    done.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "notebook_reopened_refreshed.png"), full_page=True)

    # saved again, the file holds what the reopened notebook shows
    _save(page)
    saved = _saved_runs(path)
    assert saved["ends-while-closed"]["status"] == "completed"
    assert 'data-status="completed"' in saved["ends-while-closed"]["data"]["text/html"]
    assert saved["kernel-dies"]["status"] == "interrupted"
