"""The sidebar says what the dashboard says, in a real JupyterLab in Debian's Chromium.

Two real runs (built-in engine, CPU) in one notebook, on a fake GPU that heats past
its slowdown point - 5 °C (tests/fixtures/nvml); the hot run is marked as training on that
GPU (CUDA is the seam this machine lacks), as a GPU's alarm acts only on GPU runs:

- ``early-stop`` (``trainer.early_stop: 5``): its sidebar row says the planned total is
  an upper bound and where the run will likely stop (``"at most 42,000 steps (early
  stopping); likely stops near step 8,400 (not before 6,000)"``, a tick on its bar there),
  its ETA is a bound (``"ETA ≤ …"``, the dashboard's own words), and once
  it has stopped, why (``"stopped early: no validation improvement in 5 evaluations; best
  at step …"``), the same sentence as its summary in the notebook.
- ``alarm-pause`` (a temperature alarm that pauses): its row says why it is paused in
  words (``"paused: GPU 0 at 86 °C, 1 °C past slowdown; resumes below 77 °C"``: the fake GPU
  reports its thermal margin),
  exactly the dashboard's text, never the rule.

Both come from status.json, which the run words with the dashboard's own functions
(``core/status_words.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import wait_for_kernel_idle, write_notebook
from tests.browser.test_sidebar import fake_gpu_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.slow

SIDEBAR = "#ludwig-nb-sidebar"
SETUP = """\
import tempfile
import numpy as np
import pandas as pd
from ludwig_nb.runs import train
from ludwig_nb.ui import show_run

rng = np.random.default_rng(0)
n = 6000
df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n)})
df["label"] = np.where(df.x + df.y + rng.normal(scale=0.8, size=n) > 0, "a", "b")
FEATURES = '''
input_features: [{name: x, type: number}, {name: y, type: number}]
output_features: [{name: label, type: category}]
'''
EARLY = FEATURES + "trainer: {epochs: 100, batch_size: 8, early_stop: 5, learning_rate: 0.0003}"
HOT = FEATURES + '''
trainer: {epochs: 1000, batch_size: 16, early_stop: -1}
gpu_watch:
  interval: 0.5
  alarms: [{metric: temperature, threshold: slowdown-5, action: pause, consecutive: 2}]
'''
results = tempfile.mkdtemp()"""
EARLY_CELL = 'early = train(EARLY, df, name="early-stop", results_dir=results)\nshow_run(early)'
HOT_CELL = """\
hot = train(HOT, df, name="alarm-pause", results_dir=results)
show_run(hot)
import time
deadline = time.monotonic() + 120
while hot.status != "training" and not hot.is_done and time.monotonic() < deadline:
    time.sleep(0.1)
# the run trains on the fake GPU 0 (CUDA is the seam this machine lacks): a GPU's alarm acts
# only on runs known to train on a GPU
hot._ledger.uses_gpu = True"""
PAUSE_WORDS = re.compile(  # the fake GPU reports its thermal margin: "2 °C to slowdown"
    r"^paused: GPU 0 at \d+ °C, (\d+ °C (to|past) slowdown|at its slowdown point); "
    r"resumes below \d+ °C$"
)
FORECAST = re.compile(
    r"^at most [\d,]+ steps \(early stopping\); "
    r"likely (stops (near|at) step [\d,]+.*|runs to the end)$"
)
STOPPED_EARLY = re.compile(
    r"^stopped early: no validation improvement in 5 evaluations; best at step [\d,]+$"
)


#: the early-stop row in one frame: its forecast and ETA, its status, its bar's and tick's
#: boxes (null when absent) and how many ticks; null until the row forecasts a likely stop
_FORECAST_FRAME = """row => {
  const box = el => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height};
  };
  const text = row.querySelector('.jp-LudwigNb-run-earlyStop').textContent.trim();
  if (!/likely stops (near|at) step/.test(text)) return null;
  return {text, status: row.dataset.status,
          eta: row.querySelector('.jp-LudwigNb-run-eta').textContent.trim(),
          ticks: row.querySelectorAll('.jp-LudwigNb-barMarker').length,
          bar: box(row.querySelector('.jp-LudwigNb-progress')),
          tick: box(row.querySelector('.jp-LudwigNb-barMarker'))};
}"""


def _row(page: Any, name: str) -> Any:
    rows = page.locator(f"{SIDEBAR} li.jp-LudwigNb-run")
    return rows.filter(has=page.locator(".jp-LudwigNb-run-name", has_text=name))


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        outer["x"] - 0.5 <= inner["x"]
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and outer["y"] - 0.5 <= inner["y"]
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


@pytest.fixture
def words_lab(lab_server_factory: Any, fake_gpu_env: Any, tmp_path: Path) -> Any:  # noqa: F811
    if fake_gpu_env is None:
        pytest.skip("the fake NVML could not be built (no C compiler)")
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "words.ipynb", (SETUP, EARLY_CELL, HOT_CELL))
    settings = {"ludwig-nb/plugin": {"refreshInterval": 0.5}}
    return lab_server_factory(root, env=fake_gpu_env, settings=settings, name="words")


def test_sidebar_words_early_stop_and_alarm_pause(
    words_lab: Any, lab_page: Any, artifacts_dir: Path
) -> None:
    from playwright.sync_api import expect

    page = lab_page
    page.goto(f"{words_lab.url}/lab/tree/words.ipynb?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.evaluate("() => window.jupyterapp.shell.activateById('ludwig-nb-sidebar')")

    # (b) the alarm pause, in the dashboard's words, in the sidebar and the dashboard alike
    hot = _row(page, "alarm-pause")
    expect(hot.locator(".jp-LudwigNb-run-status")).to_have_text("paused", timeout=180_000)
    expect(hot.locator(".jp-LudwigNb-run-eta")).to_have_text(PAUSE_WORDS, timeout=30_000)
    sidebar_words = hot.locator(".jp-LudwigNb-run-eta").inner_text()
    assert "alarm:" not in sidebar_words and ">=" not in sidebar_words
    badge = page.locator(".lnb-dashboard").nth(1).locator(".lnb-state")
    expect(badge).to_have_text(sidebar_words, timeout=30_000)  # one wording, two views

    # (a) early stopping: the total is a bound, the likely stop is forecast and marked
    early = _row(page, "early-stop")
    forecast = early.locator(".jp-LudwigNb-run-earlyStop")
    # The sidebar redraws every 0.5 s and the run may stop soon after its forecast: read the
    # forecast, the bar and its tick in one frame, the first that shows the forecast.
    seen = page.wait_for_function(
        f"row => ({_FORECAST_FRAME})(row)", arg=early.element_handle(), timeout=240_000
    ).json_value()
    assert seen["bar"] is not None and seen["ticks"] == 1, seen  # the bar marks it, once
    text = seen["text"]
    assert FORECAST.match(text), text
    bound, likely = (int(n.replace(",", "")) for n in re.findall(r"[\d,]+", text)[:2])
    assert 0 < likely < bound
    assert seen["eta"].startswith(("ETA ≤ ", "ETA warming up… ≤ ")), seen
    bar, tick = seen["bar"], seen["tick"]
    assert _inside(tick, bar), (tick, bar)
    where = (tick["x"] + tick["width"] / 2 - bar["x"]) / bar["width"]
    assert abs(where - likely / bound) < 0.02, (where, likely / bound)  # drawn where it says
    page.screenshot(path=str(artifacts_dir / "sidebar_early_stop_and_alarm_pause.png"))
    page.locator(SIDEBAR).screenshot(path=str(artifacts_dir / "sidebar_words_panel.png"))

    # the end: why it stopped, the same sentence as the notebook's summary
    expect(forecast).to_have_text(STOPPED_EARLY, timeout=300_000)
    expect(early.locator(".jp-LudwigNb-barMarker")).to_have_count(0)
    reason = forecast.inner_text()
    summary = page.locator('.ludwig-nb-summary[data-status="completed"]').first
    expect(summary).to_contain_text(reason, timeout=60_000)
    hot.locator("button[data-action=stop]").click()
    expect(hot.locator(".jp-LudwigNb-run-status")).to_have_text("stopped", timeout=60_000)
    page.locator(SIDEBAR).screenshot(path=str(artifacts_dir / "sidebar_stopped_early.png"))
    errors = [m for m in page.console_messages if "ludwig-nb" in m.lower() and "error" in m.lower()]
    assert errors == []
