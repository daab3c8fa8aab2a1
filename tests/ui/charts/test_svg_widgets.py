"""SVG charts in core HTML widgets (the Colab charts): redraw rules on virtual time."""

from __future__ import annotations

import dataclasses

import ipywidgets as widgets

from ludwig_nb.ui.charts.svg_widgets import SvgCurveChart, SvgTimeline
from tests.ui.conftest import FakeClock, gpu_sample


def test_curve_chart_is_a_core_html_widget_with_the_curves() -> None:
    clock = FakeClock(0.0)
    chart = SvgCurveChart("loss", "loss", clock=clock)
    assert isinstance(chart.figure, widgets.HTML)
    assert chart.figure._model_module == "@jupyter-widgets/controls"
    assert "no data" in chart.figure.value
    curves = {
        "train": ([1, 2, 3], [0.9, 0.5, 0.4]),
        "train (smoothed)": ([1, 2, 3], [0.9, 0.7, 0.6]),
    }
    writes = chart.writes(curves)
    svg = writes[chart.figure]["value"]
    assert svg.count("<polyline") == 2 and ">loss</text>" in svg
    assert ">train (raw)</text>" in svg and ">train (smoothed)</text>" in svg
    assert chart.widget is chart.figure


def test_redraws_only_on_change_and_at_most_once_per_interval() -> None:
    clock = FakeClock(0.0)
    chart = SvgCurveChart("loss", "loss", clock=clock, min_interval=1.0)
    curve = {"train": ([1.0, 2.0], [0.9, 0.5])}
    assert chart.writes(curve)
    assert chart.writes(curve) == {}  # unchanged
    grown = {"train": ([1.0, 2.0, 3.0], [0.9, 0.5, 0.4])}
    clock.now = 0.5
    assert chart.writes(grown) == {}  # changed, but too soon
    clock.now = 1.0
    assert chart.writes(grown)  # a second later it is drawn


def test_log_scale_and_title_redraw_at_once() -> None:
    clock = FakeClock(0.0)
    chart = SvgCurveChart("loss", "loss", clock=clock)
    curve = {"train": ([1.0, 2.0], [1.0, 0.01])}
    chart.writes(curve)
    assert chart.scale_writes(True) == {}
    svg = chart.writes(curve)[chart.figure]["value"]  # no interval wait for a scale switch
    assert 'class="lnb-y-label"' in svg and ">loss (log)</text>" in svg  # the y axis says so
    assert "accuracy" in chart.writes(curve, title="accuracy")[chart.figure]["value"]
    # a new metric name relabels the y axis at once
    relabelled = chart.writes(curve, y_label="r2")[chart.figure]["value"]
    assert ">r2 (log)</text>" in relabelled


class _History:
    def __init__(self) -> None:
        self.asked: list[tuple[str, int | None, float | None]] = []

    def history_columns(
        self, metric: str, device: int | None = None, since: float | None = None
    ) -> tuple[list[float], list[float]]:
        self.asked.append((metric, device, since))
        return [90.0, 95.0, 100.0], [10.0, 50.0, 80.0]


def test_timeline_draws_history_and_the_slowdown_level() -> None:
    clock = [0.0]
    timeline = SvgTimeline(0, history=60.0, clock=lambda: clock[0])
    sampler = _History()
    gpu = gpu_sample()
    svg = timeline.writes(sampler, gpu, now=100.0, history=60.0)[timeline.figure]["value"]
    asked = [a[0] for a in sampler.asked]
    assert asked == [
        "utilization_gpu",
        "memory_percent",
        "sm_activity",
        "tensor_activity",
        "temperature",
    ]
    assert all(since == 40.0 for _, _, since in sampler.asked)
    assert "utilisation" in svg and "slowdown" in svg and ">now<" in svg and "GPU 0" in svg
    assert timeline.writes(sampler, gpu, now=101.0, history=60.0) == {}  # the same sample
    newer = dataclasses.replace(gpu, time=gpu.time + 1.0)
    assert timeline.writes(sampler, newer, now=101.0, history=60.0) == {}  # too soon
    clock[0] = 1.5
    assert timeline.writes(sampler, newer, now=101.0, history=60.0)  # redrawn
