"""Thermal margin and thresholds through the real nvidia-ml-py over the fake driver.

Each GPU below offers a different subset of the three sources (the margin call, the T.Limit
field values, the legacy thresholds); every branch of ``gpu/nvml_thermal.py`` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

H100 = {  # everything: margin live, thresholds legacy, T.Limit fields
    "name": "Fake H100 (margin, fields, thresholds)",
    "temperature": [60, 80, 88],
    "margin": [27, 7, -1],
    "tlimit": {"shutdown": -5, "slowdown": -2, "gpu_max": 0},
    "thresholds": {"shutdown": 92, "slowdown": 89, "mem_max": 95, "gpu_max": 87},
}
L40S = {  # a driver that dropped the legacy thresholds: they come from the fields + margin
    "name": "Fake L40S (margin and fields only)",
    "temperature": [50, 70, 75],
    "margin": [38, 18, 13],
    "tlimit": {"shutdown": -5, "slowdown": -2, "mem_max": 3, "gpu_max": 0},
    "thresholds": None,
}
A100 = {  # the absolute model: no margin, no T.Limit fields
    "name": "Fake A100 (thresholds only)",
    "temperature": [60, 80, 86],
    "thresholds": {"shutdown": 92, "slowdown": 90, "mem_max": 95, "gpu_max": 85},
}
FIELDS_ONLY = {  # fields and thresholds, no margin call answer: margin from both
    "name": "Fake GPU (fields and thresholds, no margin)",
    "temperature": [70, 71, 72],
    "tlimit": {"slowdown": -3},
    "thresholds": {"slowdown": 91, "shutdown": 95},
}
BARE = {"name": "Fake T4 (nothing thermal)", "temperature": [40, 41, 42], "thresholds": None}


def _gpus(result: dict[str, Any], tick: int) -> list[dict[str, Any]]:
    return result["ticks"][tick]["snapshot"]["gpus"]


def test_each_source_and_what_follows_from_the_others(drive_nvml: Any) -> None:
    scenario = {"devices": [H100, L40S, A100, FIELDS_ONLY, BARE]}
    result = drive_nvml(scenario, {"ticks": [0, 1, 2], "calls": [[0, "thresholds"]]})
    ticks = [_gpus(result, t) for t in range(3)]
    h100, l40s, a100, fields_only, bare = ([tick[i] for tick in ticks] for i in range(5))
    # the margin call answers every tick, and the legacy thresholds stand as read
    assert [g["temperature_margin"] for g in h100] == [27.0, 7.0, -1.0]
    assert (h100[0]["temperature_slowdown"], h100[0]["temperature_max"]) == (89.0, 87.0)
    assert h100[0]["temperature_memory_max"] == 95.0
    # no legacy thresholds: reference = 50 + 38 = 88 -> slowdown 88 + 2, shutdown 88 + 5
    assert [g["temperature_margin"] for g in l40s] == [38.0, 18.0, 13.0]
    assert (l40s[2]["temperature_slowdown"], l40s[2]["temperature_shutdown"]) == (90.0, 93.0)
    assert (l40s[2]["temperature_max"], l40s[2]["temperature_memory_max"]) == (88.0, 85.0)
    # the absolute model: margin to the nearest slowdown point (gpu max 85 < slowdown 90)
    assert [g["temperature_margin"] for g in a100] == [25.0, 5.0, -1.0]
    # fields + thresholds fix the reference: 91 + (-3) = 88
    assert [g["temperature_margin"] for g in fields_only] == [18.0, 17.0, 16.0]
    # nothing to go on: absent, never an error, and the rest of the sample is read
    assert all(g["temperature_margin"] is None for g in bare)
    assert all(g["temperature_slowdown"] is None for g in bare)
    assert [g["temperature"] for g in bare] == [40.0, 41.0, 42.0]
    assert result["calls"] == [4]  # the four legacy thresholds of GPU 0: read once
    support = result["support"]
    assert [s["margin"] for s in support] == [
        "nvmlDeviceGetMarginTemperature",
        "nvmlDeviceGetMarginTemperature",
        "derived from the thresholds",
        "derived from the T.Limit fields and the thresholds",
        "absent",
    ]
    assert support[1]["thresholds"] == "derived from the T.Limit fields and the margin"
    assert support[2]["tlimit_fields"] == "absent"
    assert "margin" in support[2]["unsupported"]


def test_a_driver_without_the_new_calls_derives_the_margin(
    drive_nvml: Any, pre_margin_nvml_dir: Path
) -> None:
    result = drive_nvml({"devices": [H100, L40S]}, {"ticks": [0, 1]}, lib_dir=pre_margin_nvml_dir)
    h100, l40s = _gpus(result, 1)
    assert h100["temperature_margin"] == 7.0  # nearest slowdown point, 87 - 80
    assert h100["temperature_slowdown"] == 89.0
    assert l40s["temperature_margin"] is None and l40s["temperature_slowdown"] is None
    assert l40s["temperature"] == 70.0
    support = result["support"]
    assert support[0]["margin"] == "derived from the thresholds"
    assert {"margin", "tlimit_fields"} <= set(support[0]["unsupported"])


def test_alarms_on_the_margin_fire_on_every_kind_of_gpu(drive_nvml: Any) -> None:
    plan = {
        "ticks": [0, 1, 2],
        "gpu_watch": {"alarms": [{"threshold": "margin<10", "consecutive": 1, "action": "warn"}]},
    }
    result = drive_nvml({"devices": [H100, L40S, A100]}, plan)
    raised = [(t, a[1]) for t, tick in enumerate(result["ticks"]) for a in tick["alarms"]]
    assert raised == [(1, 0), (1, 2)]  # margins 7 and 5 at tick 1; the L40S keeps 13 °C
