"""A page reloaded mid-run, in a real JupyterLab in Chromium: the live dashboard comes back.

A real run (built-in engine, CPU) trains in the notebook's kernel and shows its dashboard.
The notebook is saved (the file then holds the run's snapshot, not the widget) and the
page is reloaded while the run trains. With no action from the user, the run's output
shows the live dashboard again and its step counter goes on advancing; Stop still works
from it, and the run's final snapshot then takes its place. After a kernel restart (the
kernel no longer holds the run) a reload keeps the snapshot, which says the run was
interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

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
df = pd.DataFrame({"tenure": rng.integers(0, 70, n), "plan": rng.choice(list("abc"), n)})
df["churned"] = (df.tenure < 20) & (rng.random(n) < 0.7)
CONFIG = '''
input_features: [{name: tenure, type: number}, {name: plan, type: category}]
output_features: [{name: churned, type: binary}]
trainer: {epochs: 1000, batch_size: 16, early_stop: -1}  # runs until the test stops it
'''
results = tempfile.mkdtemp()"""
TRAIN = """\
churn = train(CONFIG, df, name="churn", results_dir=results)
show_run(churn)"""

WIDGET = "application/vnd.jupyter.widget-view+json"
STEP_JS = """() => {
  const el = document.querySelector('.lnb-steps');
  const m = el && el.innerText.match(/step ([\\d,]+)/);
  return m ? Number(m[1].replace(/,/g, '')) : -1;
}"""


def _step(page: Any) -> int:
    return int(page.evaluate(STEP_JS))


def _wait_step_above(page: Any, step: int, timeout_ms: int = 60_000) -> int:
    page.wait_for_function(f"() => ({STEP_JS})() > {step}", timeout=timeout_ms)
    return _step(page)


def _save(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )


def _saved_output(path: Path) -> dict[str, Any]:
    """The run's output in the saved file (the one whose metadata names a ludwig_nb run)."""
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            if output.get("metadata", {}).get("ludwig_nb"):
                return dict(output)
    raise AssertionError(f"no ludwig_nb output saved in {path}")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)


def test_reloaded_page_gets_the_live_dashboard_back(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    path = write_notebook(root / "reattach.ipynb", [SETUP, TRAIN])
    server = lab_server_factory(root, name="reattach")
    page = lab_page
    _open(page, f"{server.url}/lab/tree/reattach.ipynb?reset")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expect(page.locator(".lnb-dashboard")).to_be_visible(timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    _wait_step_above(page, 0, 120_000)

    # saved while it trains: the file holds the snapshot, naming the widget's model
    _save(page)
    saved = _saved_output(path)
    assert WIDGET not in saved["data"]
    assert saved["metadata"]["ludwig_nb"]["model_id"]
    assert "ludwig_nb.show(churn)" in saved["data"]["text/plain"]

    # reloaded mid-run: the dashboard is back, with no action, and keeps advancing
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    expect(page.locator(".lnb-dashboard")).to_be_visible(timeout=60_000)
    after_reload = _wait_step_above(page, 0, 60_000)
    assert _wait_step_above(page, after_reload + 10, 60_000) > after_reload
    expect(page.locator(".ludwig-nb-snapshot")).to_have_count(0)
    assert page.get_by_text("Error displaying widget").count() == 0
    page.locator(".lnb-dashboard").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "reattached_live.png"), full_page=True)

    # its buttons still reach the run; once it ends, its final snapshot takes the place
    page.locator("button.lnb-stop").click()
    stopped = page.locator('.ludwig-nb-snapshot[data-status="stopped"]')
    expect(stopped).to_be_visible(timeout=60_000)
    expect(page.locator(".lnb-dashboard")).to_have_count(0)
    _save(page)
    assert _saved_output(path)["metadata"]["ludwig_nb"]["status"] == "stopped"

    # the kernel restarted: it no longer holds the run, so a reload keeps the snapshot
    page.locator(".jp-Cell").nth(1).click()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
    expect(page.locator(".lnb-dashboard")).to_be_visible(timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    _wait_step_above(page, 0, 120_000)
    _save(page)
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    wait_for_kernel_idle(page, 90_000)
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    gone = page.locator('.ludwig-nb-snapshot[data-status="interrupted"]')
    expect(gone).to_be_visible(timeout=60_000)
    expect(gone).to_contain_text("its process ended before the run did")
    expect(page.locator(".lnb-dashboard")).to_have_count(0)
    assert page.get_by_text("Error displaying widget").count() == 0
    page.screenshot(path=str(artifacts_dir / "reattach_after_restart.png"), full_page=True)
