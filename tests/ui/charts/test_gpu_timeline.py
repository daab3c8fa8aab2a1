"""The %gpu_watch timeline's SVG: round time ticks, a window that grows, % and °C apart."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest

from ludwig_nb.ui.charts.gpu_timeline import time_label, time_ticks, timeline_svg, window_for

SVG = "{http://www.w3.org/2000/svg}"


def series(seconds: int, value: float) -> tuple[list[float], list[float]]:
    return [float(-seconds + i) for i in range(seconds + 1)], [value] * (seconds + 1)


def texts(svg: str, cls: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text") if cls in (t.get("class") or "")]


@pytest.mark.parametrize(
    ("span", "history", "window"),
    [
        (0, 600, 10),
        (8, 600, 10),
        (25, 600, 30),
        (100, 600, 120),
        (599, 600, 600),
        (5000, 600, 600),
        (40, 45, 45),
    ],
)
def test_the_window_grows_with_the_data_up_to_the_history(
    span: float, history: float, window: float
) -> None:
    assert window_for(span, history) == window


@pytest.mark.parametrize(
    ("window", "ticks"),
    [
        (10, [-10, -8, -6, -4, -2, 0]),
        (30, [-30, -20, -10, 0]),
        (600, [-600, -480, -360, -240, -120, 0]),
        (45, [-40, -30, -20, -10, 0]),
    ],
)
def test_time_ticks_are_round_and_end_now(window: float, ticks: list[float]) -> None:
    assert time_ticks(window) == [float(t) for t in ticks]


def test_time_labels() -> None:
    assert [time_label(t) for t in (0.0, -30.0, -120.0, -5400.0)] == [
        "now",
        "-30 s",
        "-2 min",
        "-1 h 30 min",
    ]


def test_percent_and_celsius_have_their_own_axes_and_ticks() -> None:
    svg = timeline_svg(
        {
            "utilization_gpu": series(200, 97.0),
            "memory_percent": series(200, 40.0),
            "temperature": series(200, 72.0),
        },
        title="GPU 0",
        history=600.0,
        slowdown=87.0,
    )
    y_ticks = texts(svg, "lnb-y-tick")
    assert y_ticks[:5] == ["0 %", "25 %", "50 %", "75 %", "100 %"]
    celsius = y_ticks[5:]
    assert all(t.endswith(" °C") for t in celsius) and len(celsius) >= 2
    values = [float(t.removesuffix(" °C")) for t in celsius]
    step = values[1] - values[0]
    assert all(math.isclose(b - a, step) for a, b in itertools.pairwise(values))
    assert values[0] <= 72.0 and values[-1] >= 87.0  # the data and the threshold both show
    assert texts(svg, "lnb-x-tick") == ["-5 min", "-4 min", "-3 min", "-2 min", "-1 min", "now"]
    assert texts(svg, "lnb-threshold-label") == ["slowdown 87 °C"]
    legend = [
        t.text
        for t in ET.fromstring(svg).iter(f"{SVG}text")
        if t.text and "lnb" not in (t.get("class") or "")
    ]
    assert {"utilisation", "memory", "temperature", "slowdown 87 °C"} <= set(legend)
    assert svg.count('class="lnb-plot-area"') == 2


def test_gpm_lines_join_the_percent_panel_and_gaps_break_lines() -> None:
    xs, ys = series(100, 80.0)
    ys[50] = float("nan")
    svg = timeline_svg(
        {"utilization_gpu": (xs, ys), "sm_activity": series(100, 60.0)},
        title="GPU 0",
        history=600.0,
    )
    root = ET.fromstring(svg)
    lines = list(root.iter(f"{SVG}polyline"))
    assert len(lines) == 3  # utilisation in two runs around the gap, SM activity in one
    assert "SM activity" in svg and "slowdown" not in svg


def test_lines_are_thinned_to_about_one_point_per_two_pixels() -> None:
    xs = [float(-3000 + i) for i in range(3001)]
    ys = [50.0 + 40.0 * math.sin(i / 7) for i in range(3001)]
    svg = timeline_svg({"utilization_gpu": (xs, ys)}, title="GPU 0", history=3600.0)
    (line,) = ET.fromstring(svg).iter(f"{SVG}polyline")
    assert len(line.get("points", "").split()) <= 200
    assert len(svg) < 12_000


def test_points_outside_the_window_and_a_lone_point() -> None:
    svg = timeline_svg(
        {"temperature": ([-900.0, -5.0], [50.0, 60.0])}, title="GPU 0", history=600.0
    )
    assert texts(svg, "lnb-x-tick")[0] == "-10 min"  # capped at the history
    assert len(re.findall("<circle", svg)) == 1 and "<polyline" not in svg  # -900 s: not shown
    lone = timeline_svg({"temperature": ([0.0], [61.0])}, title="GPU 0", history=600.0)
    assert "<circle" in lone and texts(lone, "lnb-x-tick")[-1] == "now"
