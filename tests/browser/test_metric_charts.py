"""The metric charts read true, measured in the page (JupyterLab, Chromium).

Two real runs (built-in engine, CPU) in one notebook: a regression whose r2 climbs from
about -20 to 0.99 (an axis from round ticks alone would run to +10), and a binary output
whose accuracy is a score in [0, 1]. For each, the live dashboard's metric chart (bqplot)
and then the static summary's charts (SVG) are read from the DOM:

- the y tick values: an r2 axis never passes 1, a score's axis stays in [0, 1], a loss
  axis never goes below 0;
- the labels: the y axis names the metric (never the placeholder "metric"), the title
  names the output feature and the metric, the legend names each split drawn;
- the summary's charts are readable: their rendered size and their tick labels' rendered
  font size.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

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
n = 1500
df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
df["price"] = 40 + 6 * df.a - 3 * df.b + rng.normal(scale=0.5, size=n)
df["sold"] = np.where(df.a + df.b + rng.normal(scale=0.5, size=n) > 0, "yes", "no")
INPUTS = "input_features: [{name: a, type: number}, {name: b, type: number}]\\n"
# both run until the test stops them
REGRESSION = INPUTS + '''
output_features: [{name: price, type: number}]
trainer: {epochs: 1000, batch_size: 32, learning_rate: 0.3, early_stop: -1}
'''
BINARY = INPUTS + '''
output_features: [{name: sold, type: binary}]
trainer: {epochs: 1000, batch_size: 32, learning_rate: 0.05, early_stop: -1}
'''
results = tempfile.mkdtemp()"""
CELLS = {
    "price": 'price = train(REGRESSION, df, name="price-r2", results_dir=results)\nshow_run(price)',
    "sold": 'sold = train(BINARY, df, name="sold-score", results_dir=results)\nshow_run(sold)',
}

#: the live dashboard's charts (bqplot): per chart, its title, each axis's label and tick
#: labels (y told from x by the tick's orientation: a y axis's ticks share one x), the legend
LIVE_JS = """() => [...document.querySelectorAll('.lnb-dashboard .lnb-chart')].map(fig => {
  const shown = el => el.getBoundingClientRect().width > 0;
  const axes = [...fig.querySelectorAll('g.axis')].filter(shown).map(axis => {
    const ticks = [...axis.querySelectorAll('g.tick text')].filter(shown);
    const xs = ticks.map(t => Math.round(t.getBoundingClientRect().right));
    const label = axis.querySelector('text.axislabel');
    return {label: label ? label.textContent : null, ticks: ticks.map(t => t.textContent),
            vertical: ticks.length > 1 && new Set(xs).size === 1};
  });
  const title = fig.querySelector('text.mainheading');
  const box = fig.closest('.widget-vbox') || fig;
  const legend = box.querySelector('.lnb-legend');
  return {title: title ? title.textContent : null, axes,
          legend: legend ? [...legend.querySelectorAll('.lnb-legend-item')]
                             .map(i => i.textContent) : []};
})"""

#: the summary's SVG charts: title, y label, tick labels, legend, rendered box, tick font px
SUMMARY_JS = """summary => [...summary.querySelectorAll('svg.lnb-svg-chart')].map(svg => {
  const box = svg.getBoundingClientRect();
  const texts = cls => [...svg.querySelectorAll(cls)].map(t => t.textContent);
  const tick = svg.querySelector('.lnb-y-tick');
  const ylabel = svg.querySelector('.lnb-y-label');
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom
                        && b.top < a.bottom;
  const label = ylabel ? ylabel.getBoundingClientRect() : null;
  const inside = el => { const r = el.getBoundingClientRect();
                         return r.left >= box.left - 1 && r.right <= box.right + 1
                                && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; };
  return {title: (svg.querySelector('.lnb-title') || {}).textContent || null,
          yLabel: ylabel ? ylabel.textContent : null,
          labelOverTicks: !!label && [...svg.querySelectorAll('.lnb-tick')]
                            .some(t => hit(label, t.getBoundingClientRect())),
          allInside: [...svg.querySelectorAll('text')].every(inside),
          yTicks: texts('.lnb-y-tick'), xTicks: texts('.lnb-x-tick'),
          legend: texts('.lnb-legend-item text'),
          width: box.width, height: box.height,
          tickPx: tick ? tick.getBoundingClientRect().height : 0};
})"""


def _number(label: str) -> float:
    return float(label.replace(",", "").replace("−", "-"))


def _y_values(chart: dict[str, Any]) -> tuple[str | None, list[float]]:
    """The y axis's label and tick values (the one vertical axis shown)."""
    vertical = [axis for axis in chart["axes"] if axis["vertical"]]
    assert len(vertical) == 1, chart
    return vertical[0]["label"], [_number(t) for t in vertical[0]["ticks"]]


def _notebook(root: Path) -> str:
    write_notebook(root / "metrics.ipynb", (SETUP, *CELLS.values()))
    return "metrics.ipynb"


def _run_cell(page: Any, index: int) -> None:
    """Run the notebook's cell ``index`` (a click on a dashboard selects that cell)."""
    page.evaluate(
        """index => {
          window.jupyterapp.shell.currentWidget.content.activeCellIndex = index;
          return window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def _live_charts(page: Any, metric: str, evaluations: int) -> list[dict[str, Any]]:
    """The live charts once the metric chart's legend names a split and its y axis has
    ticks, after ``evaluations`` evaluations (read from the dashboard's steps line)."""
    page.wait_for_function(
        f"""() => {{
          const charts = ({LIVE_JS})();
          return charts.length === 2 && charts[1].axes.some(a => a.vertical)
                 && charts[1].legend.length > 0
                 && charts[1].axes.some(a => a.label === {metric!r});
        }}""",
        timeout=120_000,
    )
    page.wait_for_timeout(evaluations * 400)  # a few more evaluations widen the range
    return list(page.evaluate(LIVE_JS))


def _check_live(charts: list[dict[str, Any]], feature: str, metric: str) -> list[float]:
    loss, chart = charts
    label, loss_ticks = _y_values(loss)
    assert label == "loss" and min(loss_ticks) >= 0, loss  # a loss is never below 0
    label, ticks = _y_values(chart)
    assert label == metric, chart  # the metric's name, never the placeholder "metric"
    assert chart["title"] == f"{feature} {metric}", chart
    assert set(chart["legend"]) <= {"training", "validation", "test"}, chart
    assert "validation" in chart["legend"], chart  # the legend names each split drawn
    return ticks


def _check_summary(summary: Any, feature: str, metric: str) -> list[float]:
    charts = summary.evaluate(SUMMARY_JS)
    assert len(charts) == 2, charts
    for chart, (title, y_label) in zip(
        charts, (("loss", "loss"), (f"{feature} {metric}", metric)), strict=True
    ):
        assert chart["title"] == title and chart["yLabel"] == y_label, chart
        assert not chart["labelOverTicks"] and chart["allInside"], chart  # no overprinting
        assert "validation" in chart["legend"], chart
        # readable: about the live charts' size, never shrunk, tick labels of 12 px or more
        assert chart["width"] >= 440 and chart["height"] >= 260, chart
        assert chart["tickPx"] >= 12, chart
        assert all(math.isfinite(_number(t)) for t in chart["yTicks"] + chart["xTicks"]), chart
    loss_ticks = [_number(t) for t in charts[0]["yTicks"]]
    assert loss_ticks and min(loss_ticks) >= 0, charts[0]
    return [_number(t) for t in charts[1]["yTicks"]]


def _stop(page: Any, index: int) -> None:
    from playwright.sync_api import expect

    page.locator(".lnb-dashboard button.lnb-stop").first.click()
    summaries = page.locator('.ludwig-nb-summary[data-status="stopped"]')
    expect(summaries).to_have_count(index + 1, timeout=60_000)
    expect(page.locator(".lnb-dashboard")).to_have_count(0, timeout=30_000)


def test_metric_axes_and_labels_read_true(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    name = _notebook(root)
    server = lab_server_factory(root, name="metrics")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    _run_cell(page, 0)  # the setup
    wait_for_kernel_idle(page, 90_000)

    # the regression: r2 from about -20 to 0.99; its axis stops at 1
    _run_cell(page, 1)
    charts = _live_charts(page, "r2", evaluations=6)
    page.locator(".lnb-dashboard").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "metric_charts_r2_live.png"), full_page=True)
    ticks = _check_live(charts, "price", "r2")
    assert max(ticks) <= 1 and min(ticks) < 0, ticks  # a wide range, and still no tick past 1
    _stop(page, 0)
    summary = page.locator(".ludwig-nb-summary").first
    summary.scroll_into_view_if_needed()
    summary.screenshot(path=str(artifacts_dir / "metric_charts_r2_summary.png"))
    ticks = _check_summary(summary, "price", "r2")
    assert ticks and max(ticks) <= 1 and min(ticks) < 0, ticks

    # the binary output: accuracy, a score; its axis stays inside [0, 1]
    wait_for_kernel_idle(page, 60_000)
    _run_cell(page, 2)
    charts = _live_charts(page, "accuracy", evaluations=4)
    page.screenshot(path=str(artifacts_dir / "metric_charts_score_live.png"), full_page=True)
    ticks = _check_live(charts, "sold", "accuracy")
    assert ticks and all(0 <= t <= 1 for t in ticks), ticks
    _stop(page, 1)
    summary = page.locator(".ludwig-nb-summary").nth(1)
    summary.scroll_into_view_if_needed()
    summary.screenshot(path=str(artifacts_dir / "metric_charts_score_summary.png"))
    ticks = _check_summary(summary, "sold", "accuracy")
    assert ticks and all(0 <= t <= 1 for t in ticks), ticks
    assert not [m for m in page.console_messages if re.search(r"\bNaN\b", m)]
