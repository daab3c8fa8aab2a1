"""Throttle counters through the real nvidia-ml-py over the fake driver.

The clock event reason field values where the driver has them, the violation status where it
does not, and a counter that does not behave like one (a field id another driver gives to
something else) is dropped for the next source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ludwig_nb.core.throttle_time import describe_throttle_time, throttle_time

NS = 1_000_000_000
SW_THERMAL, SW_POWER_CAP = 0x20, 0x4

H100 = {
    "name": "Fake H100 (clock event reason counters)",
    "counters_ns": {
        "power_cap": [0, 0, 0.4 * NS, 1.4 * NS, 1.4 * NS],
        "sw_thermal": [0, 0, 0, 0.5 * NS, 1.5 * NS],
        "hw_thermal": [0, 0, 0, 0, 0.2 * NS],
        "power_brake": [0, 0, 0, 0, 0.1 * NS],
        "sync_boost": 0,
    },
    "reasons": [0, 0, SW_POWER_CAP, SW_POWER_CAP | SW_THERMAL, SW_THERMAL],
}
A100 = {
    "name": "Fake A100 (violation status only)",
    "violation_ns": {"power": [0, NS, 2 * NS, 2 * NS, 2 * NS], "thermal": 0, "sync_boost": 0},
}


def _series(result: dict[str, Any], device: int, key: str) -> list[Any]:
    return [tick["snapshot"]["gpus"][device][key] for tick in result["ticks"]]


def test_field_counters_in_seconds_and_the_violation_status_where_they_are_refused(
    drive_nvml: Any,
) -> None:
    result = drive_nvml({"devices": [H100, A100]}, {"ticks": [0, 1, 2, 3, 4]})
    assert _series(result, 0, "throttled_power_s") == [0.0, 0.0, 0.4, 1.4, 1.4]
    assert _series(result, 0, "throttled_thermal_s") == [0.0, 0.0, 0.0, 0.5, 1.5]
    assert _series(result, 0, "throttled_hw_thermal_s")[-1] == 0.2
    assert _series(result, 0, "throttled_power_brake_s")[-1] == 0.1
    assert _series(result, 0, "throttled_sync_boost_s")[-1] == 0.0
    assert _series(result, 1, "throttled_power_s") == [0.0, 1.0, 2.0, 2.0, 2.0]
    assert _series(result, 1, "throttled_hw_thermal_s") == [None] * 5
    h100, a100 = result["support"]
    assert h100["counters"]["throttled_thermal_s"] == "field 269"
    assert h100["counters"]["throttled_power_s"] == "field 74"
    assert a100["counters"]["throttled_power_s"] == "nvmlDeviceGetViolationStatus"
    assert a100["counters"]["throttled_power_brake_s"] == "absent"


def test_the_run_figures_from_real_counters(drive_nvml: Any) -> None:
    result = drive_nvml({"devices": [H100]}, {"ticks": [0, 1, 2, 3, 4]})
    samples = [(float(t), tick["snapshot"]["gpus"][0]) for t, tick in enumerate(result["ticks"])]
    figures = throttle_time(samples)
    assert figures is not None and figures.source == "counters"
    # per second: 0, 0.4 (cap), 1.0 (cap 1.0 + thermal 0.5, capped at 1 s), 1.0 (thermal)
    assert figures.total_s == 2.4 and figures.span_s == 4.0
    assert figures.causes["thermal"] == 1.5 and figures.causes["power_cap"] == 1.4
    assert describe_throttle_time(figures) == (
        "throttled 60 % of the run (thermal 38 %, power cap 35 %, power brake 2 %)"
    )


def test_a_driver_without_field_values_falls_back_to_the_violation_status(
    drive_nvml: Any, pre_margin_nvml_dir: Path
) -> None:
    h100 = {**H100, "violation_ns": {"power": [0, 0, 0.3 * NS], "thermal": [0, 0.2 * NS, 0.2 * NS]}}
    result = drive_nvml({"devices": [h100]}, {"ticks": [0, 1, 2]}, lib_dir=pre_margin_nvml_dir)
    assert _series(result, 0, "throttled_power_s") == [0.0, 0.0, 0.3]
    assert _series(result, 0, "throttled_thermal_s") == [0.0, 0.2, 0.2]
    assert _series(result, 0, "throttled_hw_thermal_s") == [None] * 3
    assert result["support"][0]["counters"]["throttled_thermal_s"] == (
        "nvmlDeviceGetViolationStatus"
    )


def test_counters_that_do_not_behave_like_counters_are_dropped(drive_nvml: Any) -> None:
    ticks = list(range(14))
    r580 = {  # the slowdown counters live at 251-253; 269 is a power-smoothing constant here
        "name": "Fake GPU (driver 580 field ids)",
        "field_ids": "r580",
        "fields": {"269": 2500},
        "counters_ns": {"sw_thermal": [t * NS for t in ticks]},
        "reasons": SW_THERMAL,
    }
    racing = {  # a "counter" that runs five times faster than the clock
        "name": "Fake GPU (a field that is not a time)",
        "fields": {"270": [5 * t * NS for t in ticks]},
    }
    result = drive_nvml({"devices": [r580, racing]}, {"ticks": ticks})
    thermal = _series(result, 0, "throttled_thermal_s")
    assert thermal[0] == 2500 / NS  # not caught yet: it is a plausible (tiny) counter
    assert None in thermal  # the tick its stall was found
    assert thermal[-1] == 13.0  # then the same counter under its older id, 75
    assert result["support"][0]["counters"]["throttled_thermal_s"] == "field 75"
    assert result["support"][0]["counters"]["throttled_hw_thermal_s"] == "absent"
    racing_hw = _series(result, 1, "throttled_hw_thermal_s")
    assert racing_hw[0] == 0.0 and all(v is None for v in racing_hw[1:])
    assert result["support"][1]["counters"]["throttled_hw_thermal_s"] == "absent"
