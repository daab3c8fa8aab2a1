"""``%gpu_watch`` as a person sees it in JupyterLab (Debian's Chromium), measured in the page.

On the fake NVML driver (a Hopper that heats past its slowdown point, with its thermal
margin and GPM activity): the timeline's rendered SVG has round time ticks counting back
to "now" and evenly spaced, a 0-100 % axis and a °C axis of their own, a labelled slowdown
line, data across most of its width a few seconds in (the window grows with the data), and
no two of its texts (title, legend entries, tick labels, the threshold's label) overlapping;
the gauges' texts never wrap, and the temperature reads the margin.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import wait_for_kernel_idle, write_notebook
from tests.browser.test_sidebar import fake_gpu_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.slow

WATCH = "%load_ext ludwig_nb\nw = %gpu_watch --history 2m --interval 0.5"
#: every text of the first timeline with its box, the plot areas, the polylines' boxes
GEOMETRY_JS = """() => {
  const svg = document.querySelector('.lnb-gpu-timeline svg');
  if (!svg) return null;
  const box = el => { const b = el.getBoundingClientRect();
                      return {x: b.left, y: b.top, r: b.right, b: b.bottom}; };
  const texts = [...svg.querySelectorAll('text')].map(t => ({
    text: t.textContent, cls: t.getAttribute('class') || '',
    legend: !!t.closest('.lnb-legend-item'), ...box(t)}));
  return {svg: box(svg), texts,
          plots: [...svg.querySelectorAll('rect.lnb-plot-area')].map(box),
          lines: [...svg.querySelectorAll('polyline')].map(box)};
}"""
#: how many line boxes each gauge's text takes (1: it did not wrap)
GAUGES_JS = """() => [...document.querySelectorAll('.lnb-gauge, .lnb-activity')].map(g => ({
  text: g.textContent, lines: new Set([...g.getClientRects()].map(r => Math.round(r.top))).size
}))"""
TIME_TICK = re.compile(r"^(now|-(\d+) (s|min|h))$")


def _seconds(label: str) -> float:
    match = TIME_TICK.match(label)
    assert match, label
    if label == "now":
        return 0.0
    return -float(match.group(2)) * {"s": 1, "min": 60, "h": 3600}[match.group(3)]


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return min(a["r"], b["r"]) - max(a["x"], b["x"]) > 0.5 and (
        min(a["b"], b["b"]) - max(a["y"], b["y"]) > 0.5
    )


def _check_timeline(geometry: dict[str, Any]) -> None:
    texts, svg = geometry["texts"], geometry["svg"]
    x_ticks = [t["text"] for t in texts if "lnb-x-tick" in t["cls"]]
    times = [_seconds(t) for t in x_ticks]
    assert times[-1] == 0.0 and len(times) >= 3, x_ticks
    gaps = {b - a for a, b in itertools.pairwise(times)}
    assert len(gaps) == 1, x_ticks  # evenly spaced round steps
    y_ticks = [t["text"] for t in texts if "lnb-y-tick" in t["cls"]]
    assert y_ticks[:5] == ["0 %", "25 %", "50 %", "75 %", "100 %"], y_ticks
    celsius = [float(t.removesuffix(" °C")) for t in y_ticks[5:]]
    assert len(celsius) >= 2 and all(c == round(c) for c in celsius), y_ticks
    assert len({b - a for a, b in itertools.pairwise(celsius)}) == 1, y_ticks
    labels = [t["text"] for t in texts if "lnb-threshold-label" in t["cls"]]
    assert labels == ["slowdown 87 °C"]
    for a, b in itertools.combinations(texts, 2):
        assert not _overlap(a, b), (a, b)
    for text in texts:
        assert svg["x"] - 1 <= text["x"] and text["r"] <= svg["r"] + 1, text
    assert len(geometry["plots"]) == 2  # % and °C apart
    plot = geometry["plots"][0]
    widest = max(line["r"] - line["x"] for line in geometry["lines"])
    assert widest >= 0.5 * (plot["r"] - plot["x"]), (widest, plot)  # not a sliver at the edge


def test_the_gpu_watch_timeline_and_gauges_read_true(
    lab_server_factory: Any,
    lab_page: Any,
    fake_gpu_env: Any,  # noqa: F811
    artifacts_dir: Path,
    tmp_path: Path,
) -> None:
    if fake_gpu_env is None:
        pytest.skip("the fake NVML could not be built (no C compiler)")
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "watch.ipynb", [WATCH])
    server = lab_server_factory(root, env=fake_gpu_env, name="gpu-watch")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/watch.ipynb?reset")
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".lnb-gpu-timeline svg polyline", timeout=90_000)
    page.wait_for_timeout(6_000)  # a few seconds of data: the window grows with them
    geometry = page.evaluate(GEOMETRY_JS)
    assert geometry is not None
    _check_timeline(geometry)
    gauges = page.evaluate(GAUGES_JS)
    assert gauges and all(g["lines"] == 1 for g in gauges), gauges
    temperature = next(g["text"] for g in gauges if "°C" in g["text"])
    assert re.search(r"°C · (\d+ °C (to|past) slowdown|at its slowdown point)", temperature)
    assert any(re.match(r"SM \d+ % · tensor \d+ %", g["text"]) for g in gauges), gauges
    page.locator(".lnb-gpu-timeline").first.screenshot(path=str(artifacts_dir / "gpu_watch.png"))
    page.locator(".jp-OutputArea-output").first.screenshot(
        path=str(artifacts_dir / "gpu_watch_view.png")
    )
    errors = [m for m in page.console_messages if "error" in m.lower() and "ludwig" in m.lower()]
    assert errors == []
