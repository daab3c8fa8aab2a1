"""The live training dashboard in a real JupyterLab, in Debian's Chromium.

A notebook trains a real run (built-in engine, CPU) and shows its dashboard; the test
checks what a person sees: the progress bar and the ETA move while the kernel is idle,
Pause holds the step count for two seconds and Resume continues it, Stop ends the run as
stopped and the cell swaps the widget for the static summary, which is still there after
the notebook is saved and the page reloaded. Screenshots go to the artifacts folder.

The notebook is ``notebooks/01_quickstart.ipynb``'s shape when ``DASHBOARD_NOTEBOOK``
names one; by default the test writes its own into a temporary server root.
"""

from __future__ import annotations

import os
import re
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
'''"""
TRAIN = """\
run = train(CONFIG, df, name="browser-demo", results_dir=tempfile.mkdtemp())
show_run(run)"""

STEP_JS = """() => {
  const el = document.querySelector('.lnb-steps');
  const m = el && el.innerText.match(/step ([\\d,]+)/);
  return m ? Number(m[1].replace(/,/g, '')) : -1;
}"""
TEXT_JS = "(sel) => { const el = document.querySelector(sel); return el ? el.innerText : ''; }"
BAR_JS = """() => {
  const bar = document.querySelector('.lnb-progress .progress-bar');
  return bar ? parseFloat(bar.style.width || bar.style.height || '0') : -1;
}"""


def _notebook(root: Path) -> str:
    source = os.environ.get("DASHBOARD_NOTEBOOK")
    if source:
        target = root / Path(source).name
        target.write_bytes(Path(source).read_bytes())
        return target.name
    write_notebook(root / "dashboard.ipynb", [SETUP, TRAIN])
    return "dashboard.ipynb"


def _step(page: Any) -> int:
    return int(page.evaluate(STEP_JS))


def _text(page: Any, selector: str) -> str:
    return str(page.evaluate(TEXT_JS, selector))


def _wait_step_above(page: Any, step: int, timeout_ms: int = 60_000) -> int:
    page.wait_for_function(f"() => ({STEP_JS})() > {step}", timeout=timeout_ms)
    return _step(page)


def test_dashboard_live_controls_and_summary(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    name = _notebook(root)
    server = lab_server_factory(root, name="dashboard")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    # live: the kernel is idle (the cell returned) while the bar and the ETA move
    expect(page.locator(".lnb-dashboard")).to_be_visible(timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    first_step = _wait_step_above(page, 0)
    first_bar = float(page.evaluate(BAR_JS))
    later_step = _wait_step_above(page, first_step + 20)
    page.wait_for_function(f"() => ({BAR_JS})() > {first_bar}", timeout=30_000)
    page.wait_for_function(  # past warm-up: a number and a finish clock time
        f"() => ({TEXT_JS})('.lnb-eta').includes('done ≈')", timeout=120_000
    )
    eta = _text(page, ".lnb-eta")
    assert re.search(r"≈ .+ · done ≈ (\w{3} )?\d\d:\d\d", eta), eta
    page.wait_for_function(  # the remaining time counts down
        f"() => ({TEXT_JS})('.lnb-eta') !== {eta!r}", timeout=60_000
    )
    assert later_step > first_step
    expect(page.locator(".lnb-dashboard .bqplot path.line").first).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "dashboard_live.png"), full_page=True)

    # Pause holds the step count for two seconds; Resume continues it
    page.locator("button.lnb-pause").click()
    expect(page.locator(".lnb-header")).to_contain_text("paused", timeout=30_000)
    held = _step(page)
    page.wait_for_timeout(2000)  # what is under test: nothing moves for two seconds
    assert _step(page) == held
    page.screenshot(path=str(artifacts_dir / "dashboard_paused.png"), full_page=True)
    page.locator("button.lnb-resume").click()
    expect(page.locator(".lnb-header")).to_contain_text("training", timeout=30_000)
    assert _wait_step_above(page, held, 30_000) > held

    # Stop ends the run as stopped; the cell keeps a static summary instead of the widget
    page.locator("button.lnb-stop").click()
    summary = page.locator('.ludwig-nb-summary[data-status="stopped"]')
    expect(summary).to_be_visible(timeout=60_000)
    expect(summary.locator("svg").first).to_be_visible()
    expect(page.locator(".lnb-dashboard")).to_have_count(0)
    page.screenshot(path=str(artifacts_dir / "dashboard_stopped.png"), full_page=True)

    # saved and reloaded: the summary is in the notebook file, no kernel state needed
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    saved = nbformat.read(root / name, as_version=4)
    saved_html = [
        o["data"].get("text/html", "")
        for cell in saved.cells
        for o in cell.get("outputs", [])
        if o.get("output_type") == "display_data"
    ]
    assert any("ludwig-nb-summary" in h and "<svg" in h for h in saved_html)
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    reloaded = page.locator(".ludwig-nb-summary")
    expect(reloaded).to_be_visible(timeout=60_000)
    expect(reloaded).to_contain_text("stopped")
    page.screenshot(path=str(artifacts_dir / "dashboard_reloaded.png"), full_page=True)


QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "01_quickstart.ipynb"


@pytest.mark.skipif(not QUICKSTART.exists(), reason="notebooks/01_quickstart.ipynb not written yet")
def test_quickstart_dashboard_then_summary_survives_reload(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    """01_quickstart, run all: the dashboard advances while it trains, then the cell holds
    the summary, which the saved notebook shows again after a reload."""
    from playwright.sync_api import expect

    root = tmp_path / "quickstart"
    root.mkdir()
    (root / QUICKSTART.name).write_bytes(QUICKSTART.read_bytes())
    server = lab_server_factory(root, name="quickstart")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/{QUICKSTART.name}?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expect(page.locator(".lnb-dashboard")).to_be_visible(timeout=120_000)
    first = _wait_step_above(page, 0, 120_000)
    _wait_step_above(page, first)  # it advances
    page.locator(".lnb-dashboard").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "quickstart_live.png"), full_page=True)
    summary = page.locator('.ludwig-nb-summary[data-status="completed"]')
    expect(summary).to_be_visible(timeout=240_000)
    expect(summary).to_contain_text("accuracy")
    wait_for_kernel_idle(page, 240_000)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    reloaded = page.locator('.ludwig-nb-summary[data-status="completed"]')
    expect(reloaded).to_be_visible(timeout=60_000)
    expect(reloaded.locator("svg").first).to_be_visible()
    reloaded.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "quickstart_reloaded.png"), full_page=True)
