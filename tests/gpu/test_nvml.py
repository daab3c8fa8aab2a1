"""NvmlSource through the real nvidia-ml-py, against the fake C driver, in a subprocess."""

from __future__ import annotations

import ctypes.util
import json
from pathlib import Path
from typing import Any

import pytest

from ludwig_nb.gpu import NvmlSource

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "nvml" / "scenarios"
GIB = 1 << 30


def scenario(name: str) -> dict[str, Any]:
    return json.loads((SCENARIOS / f"{name}.json").read_text())


def gpus_at(result: dict[str, Any], i: int) -> list[dict[str, Any]]:
    return result["ticks"][i]["snapshot"]["gpus"]


def test_import_and_construction_touch_no_driver() -> None:
    source = NvmlSource(nvml=None)
    assert source._started is False  # nothing until the first available/sample()


def test_clock_reason_bits_are_nvml_s_named_constants() -> None:
    pynvml = pytest.importorskip("pynvml")
    from ludwig_nb.core.gpu_sample import CLOCK_REASON_BITS

    for bit, name in CLOCK_REASON_BITS:
        camel = "".join(part.capitalize() for part in name.split("_"))
        named = getattr(pynvml, f"nvmlClocksEventReason{camel}", None)
        if named is None:  # the two reasons pynvml names only under the old "throttle" name
            named = getattr(pynvml, f"nvmlClocksThrottleReason{camel}")
        assert bit == named, name


def test_every_field_is_read_through_the_real_bindings(drive_nvml: Any) -> None:
    result = drive_nvml(scenario("ramp"), {"ticks": [8], "calls": [[0, "memory"]]})
    assert result["available"] and result["reason"] == ""
    h100, l4 = gpus_at(result, 0)
    assert h100["name"] == "Fake H100 80GB HBM3" and h100["uuid"] == "GPU-fake-h100-0000"
    assert (h100["utilization_gpu"], h100["utilization_memory"]) == (99.0, 62.0)
    assert (h100["memory_used"], h100["memory_total"]) == (60 * GIB, 80 * GIB)  # v2: no reserve
    assert h100["temperature"] == 93.0
    assert (h100["temperature_slowdown"], h100["temperature_shutdown"]) == (90.0, 95.0)
    assert h100["temperature_max"] == 87.0
    assert (h100["power_draw"], h100["power_limit"]) == (690.0, 700.0)  # mW -> W
    assert (h100["fan"], h100["clock_sm"], h100["clock_memory"]) == (90.0, 1410.0, 1215.0)
    assert h100["pstate"] == 0
    assert h100["clock_reasons"] == ["sw_thermal_slowdown"]
    assert h100["process_memory"] == 20 * GIB  # this process's entry in the process list
    assert h100["lost"] is False and h100["mig_index"] is None
    assert l4["fan"] is None and l4["temperature"] == 50.0  # passively cooled: no fan
    assert result["calls"] == [0]  # the v1 memory call was never needed


def test_temperature_ramp_raises_then_clears_alarms(drive_nvml: Any) -> None:
    plan = {
        "ticks": list(range(18)),
        "gpu_watch": {
            "alarms": [
                {
                    "metric": "temperature",
                    "threshold": "slowdown-5",
                    "consecutive": 2,
                    "action": "pause",
                },
                {"metric": "throttle", "consecutive": 2, "action": "warn"},
            ]
        },
    }
    result = drive_nvml(scenario("ramp"), plan)
    changes = [(tick, *alarm) for tick, t in enumerate(result["ticks"]) for alarm in t["alarms"]]
    assert changes == [
        (6, "temperature>=slowdown-5", 0, True, 88.0),  # 86, 88 >= 85: raised on the 2nd
        (8, "throttle", 0, True, 1.0),  # sw_thermal_slowdown at ticks 7 and 8
        (12, "throttle", 0, False, 0.0),
        (15, "temperature>=slowdown-5", 0, False, 70.0),  # 76, 70 < 80 (slowdown-10)
    ]
    temps = [v for _, v in result["history_temperature_gpu0"]]
    assert temps == scenario("ramp")["devices"][0]["temperature"]


def test_lost_gpu_unsupported_metrics_and_mig(drive_nvml: Any) -> None:
    plan = {
        "ticks": [0, 1, 2, 3, 4],
        "calls": [[1, "fan"], [1, "power"], [1, "temperature_v"], [0, "utilization"]],
    }
    result = drive_nvml(scenario("mixed"), plan)
    first, last = gpus_at(result, 0), gpus_at(result, 4)
    assert [(g["index"], g["mig_index"]) for g in last] == [
        (0, None),
        (1, None),
        (2, None),
        (2, 0),
        (2, 1),
    ]
    # GPU 0: this process's memory only (the pid 1 entry is someone else's), then lost
    assert first[0]["process_memory"] == 3 * GIB and first[0]["lost"] is False
    assert last[0]["lost"] is True and last[0]["name"] == "Fake A100 (lost at tick 3)"
    assert last[0]["temperature"] is None
    # GPU 1 goes on: no fan, no power, no thresholds, but temperature every tick
    assert [g[1]["temperature"] for g in (first, last)] == [50.0, 58.0]
    assert (last[1]["fan"], last[1]["power_draw"], last[1]["temperature_slowdown"]) == (
        None,
        None,
        None,
    )
    # NotSupported was probed once, then left alone; the lost GPU is not called again
    fan_calls, power_calls, temperature_calls, lost_calls = result["calls"]
    assert (fan_calls, power_calls, temperature_calls) == (1, 1, 5)
    assert lost_calls == 4  # ticks 0-2 answered, tick 3 said GPU_IS_LOST, tick 4 not asked
    # MIG instances: memory yes, utilisation and temperature not supported on a slice
    mig = last[3]
    assert (mig["memory_used"], mig["memory_total"]) == (GIB, 20 * GIB)
    assert (mig["utilization_gpu"], mig["temperature"]) == (None, None)
    assert mig["name"] == "Fake A100 MIG 3g.20gb"


def test_an_old_driver_falls_back_to_the_older_calls(
    drive_nvml: Any, old_driver_nvml_dir: Path
) -> None:
    plan = {"ticks": [7, 8], "calls": [[0, "memory"], [0, "temperature"], [0, "throttle_reasons"]]}
    result = drive_nvml(scenario("ramp"), plan, lib_dir=old_driver_nvml_dir)
    h100 = gpus_at(result, 1)[0]
    assert h100["temperature"] == 93.0  # legacy nvmlDeviceGetTemperature
    assert h100["memory_used"] == 60 * GIB + 512 * (1 << 20)  # v1 counts reserved memory
    assert h100["clock_reasons"] == ["sw_thermal_slowdown"]  # deprecated throttle reasons
    assert result["calls"] == [2, 2, 2]


def test_driver_not_loaded_gives_one_line_reason(drive_nvml: Any) -> None:
    result = drive_nvml({"init_error": 9, "devices": []}, {"ticks": [0]})
    assert result["available"] is False
    assert result["reason"].startswith("no NVIDIA driver found: the driver is not loaded")
    assert "\n" not in result["reason"]
    assert gpus_at(result, 0) == [] and result["ticks"][0]["snapshot"]["reason"] == result["reason"]


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="a real driver is installed"
)
def test_no_library_gives_one_line_reason(drive_nvml: Any, tmp_path: Path) -> None:
    result = drive_nvml(None, {"ticks": [0]}, lib_dir=tmp_path)
    assert result["available"] is False
    assert result["reason"].startswith("no NVIDIA driver found: libnvidia-ml.so.1 is not installed")


def test_training_goes_on_when_a_gpu_is_lost_and_pauses_on_a_hot_one(drive_nvml: Any) -> None:
    fake = {
        "devices": [
            {"name": "lost at 4", "lost_at": 4},
            {
                "name": "hot",
                "temperature": [50, 60, 70, 80, 88, 90, 92, 92, 90, 85, 80, 75, 70, 65, 60],
                "unsupported": ["fan"],
            },
        ]
    }
    plan = {
        "train": {"steps": 150, "device_index": 1},
        "gpu_watch": {"alarms": [{"threshold": "slowdown-5", "consecutive": 2, "action": "pause"}]},
    }
    result = drive_nvml(fake, plan)["train"]
    assert result["steps"] == 150  # every step ran: a lost GPU and a missing metric stop nothing
    assert result["last_loss"][0] < 0.2 * result["first_loss"][0]
    alarm_events = [e for e in result["events"] if e != "step_finished"]
    assert alarm_events == ["alarm_raised", "paused", "alarm_cleared", "resumed"]
    lost, hot = result["last"]["gpus"]
    assert lost["lost"] is True and hot["lost"] is False
    assert hot["temperature"] == 60.0 and hot["fan"] is None
    # 150 steps of 0.2 s are 30 virtual seconds; the pause (ticks 5..12) added to that
    assert result["virtual_seconds"] > 30.0 + 5.0


def test_colab_gpus_t4_l4_a100_read_and_shown_in_the_gauges(drive_nvml: Any) -> None:
    """Colab's GPUs (T4, L4, A100) through the real bindings: temperature against their
    slowdown level, power against their limit and throttle reasons (what Colab's own
    resource panel does not show), no fan, no per-process attribution (container PIDs)."""
    from ludwig_nb.core.gpu_sample import GpuSample
    from ludwig_nb.ui.gauges import compact_gauges_html, gpu_card_html

    result = drive_nvml(scenario("colab"), {"ticks": [0, 1, 2, 3]})
    idle, hot = gpus_at(result, 0), gpus_at(result, 3)
    t4, l4, a100 = hot
    assert [g["name"] for g in hot] == ["Tesla T4", "NVIDIA L4", "NVIDIA A100-SXM4-40GB"]
    assert (t4["memory_total"], t4["memory_used"]) == (15 * GIB, 9 * GIB)
    assert (t4["temperature"], t4["temperature_slowdown"], t4["temperature_shutdown"]) == (
        86.0,
        93.0,
        96.0,
    )
    assert (t4["power_draw"], t4["power_limit"]) == (68.9, 70.0)
    assert t4["clock_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]
    assert idle[0]["clock_reasons"] == ["gpu_idle"] and idle[0]["pstate"] == 8
    # no fan on these passively cooled cards; the kernel's own PID is not in the (container's)
    # process list, so nothing is attributed to "this kernel"
    assert all(g["fan"] is None and not g["process_memory"] for g in hot)
    assert (l4["power_limit"], l4["clock_reasons"]) == (72.0, ["sw_power_cap"])
    assert (a100["power_draw"], a100["temperature_slowdown"]) == (400.0, 89.0)

    card = gpu_card_html(GpuSample.from_dict(t4))
    assert "Tesla T4" in card and "86 °C" in card and "/ 70 W" in card
    assert "sw_thermal_slowdown" in card and "sw_power_cap" in card and "fan" not in card
    assert "this kernel" not in card
    row = compact_gauges_html(_snapshot_of(result, 3), device_index=0)  # dashboard's row
    assert row.count("<b>GPU ") == 3 and "GPU 0</b> ◀" in row
    assert "/ 400 W" in row and "sw_thermal_slowdown" in row and "gpu_idle" not in row


def _snapshot_of(result: dict[str, Any], i: int) -> Any:
    from ludwig_nb.core.gpu_sample import Snapshot

    return Snapshot.from_dict(result["ticks"][i]["snapshot"])
