"""Energy, time throttled and GPM through the real nvidia-ml-py over the fake driver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ludwig_nb.core import resource_profile as rp
from ludwig_nb.gpu.gpm import GPM_FIELDS, GpmReader

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "nvml" / "scenarios"
GIB = 1 << 30


def _profiling() -> dict[str, Any]:
    return json.loads((SCENARIOS / "profiling.json").read_text())


def _gpus(result: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [tick["snapshot"]["gpus"] for tick in result["ticks"]]


def test_energy_and_violation_counters_are_read_in_joules_and_seconds(drive_nvml: Any) -> None:
    result = drive_nvml(_profiling(), {"ticks": [0, 1, 2, 3], "calls": [[0, "energy"]]})
    h200 = [tick[0] for tick in _gpus(result)]
    assert [g["energy_consumed"] for g in h200] == [5000.0, 5100.0, 5300.0, 5600.0]  # mJ -> J
    assert [g["throttled_power_s"] for g in h200] == [0.0, 0.0, 0.5, 1.5]  # ns -> s
    assert [g["throttled_thermal_s"] for g in h200] == [0.0, 0.0, 0.0, 0.25]
    assert result["calls"] == [4]  # one energy read per sample


def test_gpm_rates_start_at_the_second_sample_and_a_gpm_less_gpu_has_none(
    drive_nvml: Any,
) -> None:
    result = drive_nvml(_profiling(), {"ticks": [0, 1, 2, 3], "calls": [[1, "gpm"]]})
    ticks = _gpus(result)
    h200 = [tick[0] for tick in ticks]
    assert h200[0]["sm_activity"] is None  # one GPM sample is not a rate yet
    assert [g["sm_activity"] for g in h200[1:]] == [40.0, 80.0, 90.0]
    assert [g["memory_bandwidth"] for g in h200[1:]] == [15.0, 45.0, 55.0]
    assert [g["tensor_activity"] for g in h200[1:]] == [10.0, 50.0, 60.0]
    assert h200[3]["sm_occupancy"] == 35.0
    a100 = [tick[1] for tick in ticks]
    assert all(g[field] is None for g in a100 for field in GPM_FIELDS)
    assert all(g["temperature"] is not None for g in a100)  # the rest is still read
    assert result["calls"] == [1]  # asked whether it has GPM once, never again


def test_the_summary_from_real_readings(drive_nvml: Any) -> None:
    result = drive_nvml(_profiling(), {"ticks": [0, 1, 2, 3]})
    samples = [
        {"time": float(t), "phase": "training", "step": t, "host": None, "gpus": gpus}
        for t, gpus in enumerate(_gpus(result))
    ]
    steps = [(float(t), float(t) + 1, 100) for t in range(3)]
    summary = rp.summarize(samples, [(0.0, 3.0, "training")], steps, interval=1.0)
    h200, a100 = summary["gpus"]["0"], summary["gpus"]["1"]
    assert (h200["energy_j"], h200["energy_source"]) == (600.0, "counter")
    assert h200["j_per_sample"] == 2.0  # 600 J over 300 samples
    assert (h200["throttled_power_s"], h200["throttled_thermal_s"]) == (1.5, 0.25)
    assert h200["peak_memory_used"] == 100 * GIB
    # the margin is to the nearest slowdown point: the GPU max operating 87 °C (slowdown: 90)
    assert h200["peak_temperature"] == 85.0 and h200["min_slowdown_margin"] == 2.0
    assert h200["mean_sm_activity"] == pytest.approx(70.0)
    # the A100's fake counter integrates its power (1e6 mJ + sum of mW over past ticks)
    assert a100["energy_j"] == pytest.approx(250.0) and a100["energy_source"] == "counter"
    assert a100["mean_sm_activity"] is None
    assert summary["energy_j"] == pytest.approx(850.0)
    assert summary["throttled_power_s"] == pytest.approx(1.5)
    # per second: 0, 0.5 (cap), 1.0 (cap 1.0, heat 0.25: capped at the second) of 3 s
    assert summary["throttle"]["text"] == (
        "GPU 0 throttled 50 % of the run (thermal 8 %, power cap 50 %)"
    )
    assert summary["throttle"]["source"] == "counters" and summary["throttle"]["gpu"] == "0"


@pytest.fixture(scope="module")
def no_counters_dir(nvml_build: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A driver without the energy and violation calls (FunctionNotFound in pynvml)."""
    omit = ["nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetViolationStatus"]
    return Path(nvml_build.build_fake_nvml(tmp_path_factory.mktemp("nvml_nc"), omit=omit)).parent


def test_a_driver_without_the_counters_leaves_them_absent(
    drive_nvml: Any, no_counters_dir: Path
) -> None:
    result = drive_nvml(_profiling(), {"ticks": [0, 1, 2]}, lib_dir=no_counters_dir)
    assert result["available"]
    gpus = _gpus(result)
    assert all(
        g["energy_consumed"] is None and g["throttled_power_s"] is None
        for tick in gpus
        for g in tick
    )
    assert gpus[2][0]["sm_activity"] == 80.0  # GPM is still there
    samples = [{"time": float(t), "gpus": g} for t, g in enumerate(gpus)]
    summary = rp.summarize(samples, [(0.0, 2.0, "training")], [], interval=1.0)
    h200, a100 = summary["gpus"]["0"], summary["gpus"]["1"]
    assert h200["energy_source"] == "power_integral"
    assert h200["energy_j"] == pytest.approx(150.0 + 250.0)  # trapezoids of 100-200-300 W
    # no violation counter: seconds are counted from the sampled clock reasons
    assert a100["throttled_power_s"] == 1.0 and a100["throttled_thermal_s"] == 0.0


class _NoGpmNvml:
    """An nvidia-ml-py from before GPM: the calls do not exist."""

    class NVMLError(Exception):
        pass


def test_a_binding_without_gpm_is_asked_once() -> None:
    reader = GpmReader(_NoGpmNvml(), handle=object())  # type: ignore[arg-type]
    assert reader.read() == {} and reader.supported is False
    assert reader.read() == {}
