"""scripts/checks/gpu_support.py (what gpu_check.sh runs on a real GPU) over the fake driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _run(
    nvml_build: ModuleType, lib_dir: Path, tmp_path: Path, device: dict[str, object]
) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"tick_seconds": 0.2, "devices": [device]}))
    env = nvml_build.scenario_env(lib_dir, scenario)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "checks" / "gpu_support.py"), "--seconds", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_consistent_card_passes_and_says_what_it_supports(
    nvml_build: ModuleType, fake_nvml_dir: Path, tmp_path: Path
) -> None:
    device = {
        "name": "Fake H100",
        "temperature": 60,
        "margin": 27,
        "tlimit": {"slowdown": -2},
        "thresholds": {"slowdown": 89, "shutdown": 92, "gpu_max": 87},
        "counters_ns": {"power_cap": [i * 100_000_000 for i in range(100)]},  # 0.5 s per s
    }
    done = _run(nvml_build, fake_nvml_dir, tmp_path, device)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"margin": "nvmlDeviceGetMarginTemperature"' in done.stdout
    assert '"throttled_power_s": "field 74"' in done.stdout
    assert "raw field values" in done.stdout and "CHECK FAILED" not in done.stdout


def test_readings_that_do_not_hold_together_fail(
    nvml_build: ModuleType, fake_nvml_dir: Path, tmp_path: Path
) -> None:
    device = {
        "name": "Fake GPU (margin 5 °C off its thresholds)",
        "temperature": 60,
        "margin": 32,
        "thresholds": {"slowdown": 89, "gpu_max": 87},
    }
    done = _run(nvml_build, fake_nvml_dir, tmp_path, device)
    assert done.returncode == 1
    assert "CHECK FAILED: margin zero 92 °C vs nearest slowdown 87 °C" in done.stdout
