"""Power capping through the real nvidia-ml-py over the fake driver: set, restored at the
end, restored at exit after a crash, and the no-permission path (duty cycling instead)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.gpu.conftest import NVML_FIXTURES

SCENARIO = {"devices": [{"name": "Fake A100", "power_mw": 280000, "power_limit_mw": 300000}]}


def drive(
    nvml_build: ModuleType, lib_dir: Path, tmp_path: Path, mode: str, denied: bool = False
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], list[tuple[int, int]]]:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    log = tmp_path / "power.log"
    env = nvml_build.scenario_env(lib_dir, scenario)
    env["FAKE_NVML_POWER_LOG"] = str(log)
    env["FAKE_NVML_NO_PERMISSION"] = "1" if denied else "0"
    done = subprocess.run(
        [sys.executable, str(NVML_FIXTURES / "power_cap_drive.py"), mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    sets = []
    if log.exists():
        sets = [tuple(int(v) for v in line.split()) for line in log.read_text().splitlines()]
    return done, lines, sets  # type: ignore[return-value]


def test_cap_set_and_restored_at_the_end(nvml_build, fake_nvml_dir, tmp_path):
    done, lines, sets = drive(nvml_build, fake_nvml_dir, tmp_path, "end")
    assert done.returncode == 0, done.stderr[-2000:]
    out = lines[-1]
    assert out["limits"][0] == 300.0  # before the first snapshot was acted on
    assert out["limits"][-1] == 200.0  # the card enforces the cap
    assert out["after"] == 300.0  # restored
    assert sets == [(0, 200000), (0, 300000)]  # set once, restored once
    event = out["events"][0]
    assert (event["method"], event["duty"], event["target"]) == ("power_limit", 1.0, 200.0)
    assert out["idle_duty"] == 1.0  # capped by the card: no idle time


def test_cap_restored_at_exit_after_a_crash(nvml_build, fake_nvml_dir, tmp_path):
    done, lines, sets = drive(nvml_build, fake_nvml_dir, tmp_path, "crash")
    assert done.returncode != 0 and "training crashed with the cap set" in done.stderr
    assert lines[0]["limits"][-1] == 200.0
    assert sets == [(0, 200000), (0, 300000)]  # atexit put the original back


def test_no_permission_says_so_once_and_duty_cycles(nvml_build, fake_nvml_dir, tmp_path):
    done, lines, sets = drive(nvml_build, fake_nvml_dir, tmp_path, "end", denied=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sets == []
    messages = [line for line in done.stderr.splitlines() if "cannot cap" in line]
    assert len(messages) == 1
    assert "root or the SYS_ADMIN capability" in messages[0]
    out = lines[-1]
    assert out["limits"] == [300.0] * 4 and out["after"] == 300.0
    event = out["events"][0]
    assert event["method"] == "duty" and event["duty"] < 1.0  # 280 W > 200 W: it idles
    assert "power cap refused" in event["reason"]


@pytest.mark.parametrize("watts", [50.0, 1000.0])
def test_cap_is_clamped_to_the_card_range(nvml_build, fake_nvml_dir, tmp_path, watts):
    # through the same driver, without the watch: PowerCap alone
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(SCENARIO))
    log = tmp_path / "p.log"
    env = nvml_build.scenario_env(fake_nvml_dir, scenario)
    env["FAKE_NVML_POWER_LOG"] = str(log)
    code = (
        "from ludwig_nb.gpu.power_cap import PowerCap\n"
        f"cap = PowerCap(); print(repr(cap.apply(0, {watts}))); print(cap.restore())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["''", "[]"]
    first = int(log.read_text().split()[1])
    assert first == (100000 if watts < 100 else 300000)
