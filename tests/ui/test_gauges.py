"""Gauge HTML: temperatures against each device's thresholds, N/A, lost, MIG, compact row."""

from __future__ import annotations

import re

import pytest

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.ui.gauges import (
    GREEN,
    ORANGE,
    RED,
    MiniGauges,
    bar_html,
    compact_gauges_html,
    gpu_card_html,
    no_gpu_html,
    temperature_color,
    temperature_html,
)

GIB = 1 << 30
FULL = GpuSample(
    index=0,
    name="H100",
    utilization_gpu=97.0,
    memory_used=60 * GIB,
    memory_total=80 * GIB,
    temperature=93.0,
    temperature_slowdown=90.0,
    temperature_shutdown=95.0,
    temperature_margin=-3.0,
    power_draw=690.0,
    power_limit=700.0,
    fan=80.0,
    clock_sm=1410.0,
    pstate=0,
    process_memory=20 * GIB,
    clock_reasons=("sw_thermal_slowdown", "sw_power_cap"),
)
HOST = HostSample(time=0.0, cpu_percent=42.0, memory_used=8 * GIB, memory_total=32 * GIB)


@pytest.mark.parametrize(
    ("temp", "slowdown", "color"),
    [
        (60.0, 90.0, GREEN),
        (85.0, 90.0, ORANGE),
        (90.0, 90.0, RED),
        (81.0, None, ORANGE),
        (None, 90.0, "#9e9e9e"),
    ],
)
def test_temperature_color_follows_the_devices_slowdown(
    temp: float | None, slowdown: float | None, color: str
) -> None:
    assert temperature_color(temp, slowdown) == color


def test_temperature_bar_marks_slowdown_and_shutdown() -> None:
    text = temperature_html(FULL)
    assert ">93 °C · 3 °C past slowdown</span>" in text
    assert 'title="slowdown 90 °C · shutdown 95 °C"' in text  # the thresholds: in the tooltip
    assert 'style="white-space:nowrap"' in text  # never "(slowdown 87 / shutdown" then "97)"
    marks = re.findall(r"left:([\d.]+)%;width:2px;background:(#\w+)", text)
    assert marks == [
        (f"{100 * 90 / 100:.1f}", ORANGE),
        (f"{100 * 95 / 100:.1f}", RED),
    ]  # scale ends at 100


@pytest.mark.parametrize(
    ("margin", "color"), [(12.0, GREEN), (5.0, ORANGE), (0.0, RED), (-2.0, RED)]
)
def test_the_colour_follows_the_margin_when_there_is_one(margin: float, color: str) -> None:
    assert temperature_color(70.0, 90.0, margin) == color  # the margin wins over slowdown


def test_gpm_activity_beside_utilisation_explained_in_its_tooltip() -> None:
    from ludwig_nb.ui.gauges import ACTIVITY_TOOLTIP, activity_html

    busy = GpuSample(
        index=0,
        utilization_gpu=100.0,
        sm_activity=62.4,
        tensor_activity=41.0,
        memory_bandwidth=35.0,
    )
    card = gpu_card_html(busy)
    assert ">SM 62 % · tensor 41 % · DRAM 35 %</span>" in card
    assert card.count(f'title="{ACTIVITY_TOOLTIP}"') == 2  # the bar and the activity
    assert "any kernel ran" in ACTIVITY_TOOLTIP and "\n" not in ACTIVITY_TOOLTIP
    assert activity_html(GpuSample(index=0, utilization_gpu=100.0)) == ""  # no GPM: absent
    assert "lnb-activity" not in gpu_card_html(GpuSample(index=0, utilization_gpu=100.0))
    compact = compact_gauges_html(Snapshot(time=0.0, gpus=(busy,)))
    assert "100 % (SM 62 %)" in compact


def test_the_card_says_how_much_of_the_last_minute_was_lost() -> None:
    from ludwig_nb.core.throttle_time import ThrottleTime

    lost = ThrottleTime(60.0, 21.0, {"thermal": 18.0, "power_cap": 3.0}, "counters")
    card = gpu_card_html(FULL, throttled=lost)
    assert "throttled 35 % of the last minute (thermal 30 %, power cap 5 %)" in card


def test_card_shows_every_metric_and_throttle_reasons() -> None:
    card = gpu_card_html(FULL)
    for needle in (
        "GPU 0",
        "H100",
        "97 %",
        "60.0 GiB / 80.0 GiB",
        "this kernel 20.0 GiB",
        "690 W / 700 W",
        "fan 80 %",
        "SM 1410 MHz",
        "P0",
        "sw_thermal_slowdown",
        "sw_power_cap",
    ):
        assert needle in card, needle


def test_card_degrades_to_na_lost_and_mig() -> None:
    bare = gpu_card_html(GpuSample(index=3))
    assert bare.count("N/A") >= 4 and "throttling</span>none" in bare
    assert "lost" in gpu_card_html(GpuSample(index=1, name="A100", lost=True))
    mig = gpu_card_html(GpuSample(index=2, mig_index=1, memory_used=GIB, memory_total=20 * GIB))
    assert "GPU 2 MIG 1" in mig and "temperature" not in mig and "1.0 GiB / 20.0 GiB" in mig


def test_bar_clips_its_fraction() -> None:
    assert "width:100.0%" in bar_html(1.7, "x") and "width:0.0%" in bar_html(-1.0, "x")
    assert "width:" not in bar_html(None, "N/A").split("</span>")[0].split("overflow:hidden")[1]


def test_no_gpu_says_why_and_shows_the_host() -> None:
    text = no_gpu_html("no NVIDIA driver found: libnvidia-ml.so.1 is not installed", HOST)
    assert text.count("<div") == 2 and "no NVIDIA driver found" in text
    assert "CPU 42 %" in text and "RAM 8.0 GiB / 32.0 GiB" in text


def test_compact_row_marks_the_runs_gpu() -> None:
    snapshot = Snapshot(time=0.0, gpus=(FULL, GpuSample(index=1, lost=True)), host=HOST)
    row = compact_gauges_html(snapshot, device_index=0)
    assert "<b>GPU 0</b> ◀" in row and "<b>GPU 1</b> lost" in row and "CPU" not in row
    assert compact_gauges_html(Snapshot(time=0.0, host=HOST, reason="no GPU source")).startswith(
        '<div style="color:#666">no GPU source'
    )
    assert compact_gauges_html(None) == ""


def test_mini_gauges_write_only_when_the_row_changes() -> None:
    gauges = MiniGauges(device_index=0)
    first = Snapshot(time=0.0, gpus=(FULL,))
    ((widget, traits),) = gauges.writes(first).items()
    assert widget is gauges.widget and "GPU 0" in traits["value"]
    assert gauges.writes(Snapshot(time=1.0, gpus=(FULL,))) == {}  # same readings: nothing to send


def test_a_gpu_on_a_ray_worker_s_node_is_named_by_its_host():
    from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
    from ludwig_nb.ui.gauges import compact_gauges_html

    remote = GpuSample(index=1, temperature=50.0, host="node-b", node_id="ab", host_index=3)
    text = compact_gauges_html(Snapshot(time=0.0, gpus=(remote,)))
    assert "<b>GPU 3 on node-b</b>" in text


def test_a_minute_without_throttling_says_nothing() -> None:
    from ludwig_nb.core.throttle_time import ThrottleTime

    quiet = ThrottleTime(60.0, 0.0, {"thermal": 0.0}, "counters")
    card = gpu_card_html(FULL, throttled=quiet)
    assert "throttled" not in card.split("throttling")[-1]  # no "not throttled" beside a chip
