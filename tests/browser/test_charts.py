"""What a person reads on the live dashboard, measured in the page (JupyterLab, Chromium).

One run, checked the way a picture can fail: every tick label of both charts is a finite
number inside its chart's box, the legend's box does not overlap the plot area, the log
scale works and switching back repairs the axis (no ``NaN`` in the console), a pause
reads in words with its estimate frozen, a notebook saved while the run is live holds a
readable fallback for every widget output, the sidebar lists the run first among this
server's notebooks' runs, named by its notebook and process, and its filters (live / this
notebook / all, hide finished) keep and drop it, and the time from running the cell to the
dashboard in the DOM is printed (first and second run; measured, not asserted).
"""

from __future__ import annotations

import itertools
import math
import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser.conftest import wait_for_kernel_idle, write_notebook
from tests.browser.test_dashboard import SETUP, _step, _text, _wait_step_above

pytestmark = pytest.mark.slow

WIDGET = "application/vnd.jupyter.widget-view+json"
TRAIN = """\
run = train(CONFIG, df, name="charts-demo", results_dir=tempfile.mkdtemp())
show_run(run)"""

#: per chart: its box, the plot area's box, the legend's box and every tick label's box
GEOMETRY_JS = """() => [...document.querySelectorAll('.lnb-dashboard .lnb-chart')].map(fig => {
  const box = r => { const b = r.getBoundingClientRect();
                     return {x: b.left, y: b.top, r: b.right, b: b.bottom, w: b.width}; };
  const chart = fig.closest('.widget-vbox') || fig;
  const plot = fig.querySelector('rect.plotarea_background') || fig.querySelector('.plotarea');
  const legend = chart.querySelector('.lnb-legend');
  const axes = [...fig.querySelectorAll('g.axis')].map(a => [...a.querySelectorAll('g.tick text')]
    .filter(t => t.getBoundingClientRect().width > 0)
    .map(t => ({text: t.textContent, ...box(t)}))).filter(a => a.length > 0);
  return {fig: box(fig), plot: plot ? box(plot) : null, legend: legend ? box(legend) : null,
          ticks: axes.flat(), axes};
})"""


def _number(label: str) -> float:
    return float(label.replace(",", "").replace("−", "-"))


def _log_tick(value: float) -> bool:
    """1, 2, 3 or 5 times a power of ten: what a log axis labels."""
    if value <= 0:
        return False
    mantissa = value / 10 ** math.floor(math.log10(value) + 1e-9)
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 3, 5))


def _check_charts(page: Any) -> list[dict[str, Any]]:
    charts = page.evaluate(GEOMETRY_JS)
    assert len(charts) == 2, charts
    for chart in charts:
        fig, plot, legend = chart["fig"], chart["plot"], chart["legend"]
        assert chart["ticks"], "a chart without tick labels"
        for tick in chart["ticks"]:
            assert math.isfinite(_number(tick["text"])), tick
            assert fig["x"] - 1 <= tick["x"] and tick["r"] <= fig["r"] + 1, (tick, fig)
            assert fig["y"] - 1 <= tick["y"] and tick["b"] <= fig["b"] + 1, (tick, fig)
        for axis in chart["axes"]:  # linear axes: evenly spaced labels, so none is mis-rounded
            values = [_number(t["text"]) for t in axis]
            gaps = [b - a for a, b in itertools.pairwise(values)]
            even = gaps and max(gaps) - min(gaps) <= 1e-9 * max(1.0, *map(abs, values))
            assert len(values) < 3 or even or all(map(_log_tick, values)), values
        assert plot is not None and legend is not None
        overlap_x = min(legend["r"], plot["r"]) - max(legend["x"], plot["x"])
        overlap_y = min(legend["b"], plot["b"]) - max(legend["y"], plot["y"])
        assert overlap_x <= 0 or overlap_y <= 0, (legend, plot)  # the legend is outside
    return charts


def _notebook(root: Path) -> str:
    write_notebook(root / "charts.ipynb", [SETUP, TRAIN])
    return "charts.ipynb"


def _time_to_dashboard(page: Any, count: int) -> float:
    began = time.monotonic()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
    page.wait_for_function(
        f"() => document.querySelectorAll('.lnb-dashboard').length >= {count}",
        timeout=120_000,
        polling=20,
    )
    return time.monotonic() - began


def test_charts_pause_and_saved_fallback_in_the_browser(
    lab_server_factory: Any, lab_page: Any, artifacts_dir: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    name = _notebook(root)
    server = lab_server_factory(root, name="charts")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate(  # the setup cell; the training cell becomes the active one
        "() => window.jupyterapp.commands.execute('notebook:run-cell-and-select-next')"
    )
    wait_for_kernel_idle(page, 90_000)
    first = _time_to_dashboard(page, 1)
    print(f"\ntime to dashboard in the DOM: first run {first:.2f} s")

    _wait_step_above(page, 150, 120_000)
    page.wait_for_timeout(600)  # one more frame with the latest ranges
    _check_charts(page)
    page.locator(".lnb-dashboard").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "charts_live.png"), full_page=True)

    page.locator("button.lnb-log").click()  # log scale, then back
    page.wait_for_timeout(1500)
    _check_charts(page)
    page.screenshot(path=str(artifacts_dir / "charts_log.png"), full_page=True)
    page.locator("button.lnb-log").click()
    page.wait_for_timeout(1500)
    _check_charts(page)
    assert not [m for m in page.console_messages if "NaN" in m], page.console_messages

    page.locator("button.lnb-pause").click()
    expect(page.locator(".lnb-header")).to_contain_text("paused by you", timeout=30_000)
    frozen = _text(page, ".lnb-eta")
    assert frozen.startswith("paused · estimate frozen"), frozen
    page.wait_for_timeout(2500)
    assert _text(page, ".lnb-eta") == frozen and _text(page, ".lnb-throughput") == ""
    page.screenshot(path=str(artifacts_dir / "dashboard_paused_words.png"), full_page=True)

    # saved while live: every widget output of the file has a readable fallback
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    saved = nbformat.read(root / name, as_version=4)
    outputs = [o for c in saved.cells for o in c.get("outputs", []) if "data" in o]
    assert outputs
    for output in outputs:
        data = output["data"]
        assert WIDGET not in data or "text/html" in data, data
        assert "text/html" in data or "text/plain" in data
    assert any("ludwig-nb-snapshot" in o["data"].get("text/html", "") for o in outputs)

    # the sidebar: this notebook's live run first, under this server's notebooks, named by
    # its notebook and its process; the filters keep it under their own headings
    page.evaluate("() => window.jupyterapp.shell.activateById('ludwig-nb-sidebar')")
    sidebar = page.locator("#ludwig-nb-sidebar")
    item = sidebar.locator("li.jp-LudwigNb-run")
    groups = sidebar.locator("li.jp-LudwigNb-group")
    expect(item).to_have_count(1, timeout=30_000)
    expect(groups).to_have_text(["▾ this server's notebooks (1)"])
    where = item.locator(".jp-LudwigNb-run-where")
    expect(where).to_have_text(re.compile(rf"^{re.escape(name)} · process \d+$"))
    assert (where.get_attribute("title") or "").endswith(name), where.get_attribute("title")
    expect(item.locator(".jp-LudwigNb-run-eta")).to_have_text("paused by you")
    for choice, heading in (
        ("live", "this server's notebooks"),
        ("notebook", "this notebook"),
        ("all", "this server's notebooks"),
    ):
        sidebar.locator("select.jp-LudwigNb-filter").select_option(choice)
        expect(groups).to_have_text([f"▾ {heading} (1)"], timeout=10_000)
        expect(item).to_have_count(1, timeout=10_000)
    page.screenshot(path=str(artifacts_dir / "sidebar_grouped.png"), full_page=True)

    page.locator("button.lnb-resume").click()
    held = _step(page)
    assert _wait_step_above(page, held, 30_000) > held
    page.locator("button.lnb-stop").click()
    expect(page.locator('.ludwig-nb-summary[data-status="stopped"]')).to_be_visible(timeout=60_000)
    svg_ticks = page.evaluate(
        "() => [...document.querySelectorAll('.ludwig-nb-summary .lnb-tick')]"
        ".map(t => t.textContent)"
    )
    assert svg_ticks and all(math.isfinite(_number(t)) for t in svg_ticks), svg_ticks
    page.locator(".ludwig-nb-summary").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "summary_axes.png"), full_page=True)
    expect(item.locator(".jp-LudwigNb-run-status")).to_have_text("stopped", timeout=30_000)
    expect(where).to_have_text(name)  # finished: its notebook, no process any more
    sidebar.locator("input.jp-LudwigNb-hideFinished-input").check()  # the stopped run goes
    expect(item).to_have_count(0, timeout=10_000)
    sidebar.locator("select.jp-LudwigNb-filter").select_option("live")
    expect(item).to_have_count(0)
    sidebar.locator("input.jp-LudwigNb-hideFinished-input").uncheck()
    sidebar.locator("select.jp-LudwigNb-filter").select_option("all")
    expect(item).to_have_count(1, timeout=10_000)

    wait_for_kernel_idle(page, 60_000)
    second = _time_to_dashboard(page, 1)  # the same cell again, in a warm kernel
    print(f"time to dashboard in the DOM: second run {second:.2f} s")
    page.locator("button.lnb-stop").click()
