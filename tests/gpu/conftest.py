"""Fixtures for the GPU telemetry tests: the fake NVML driver, built once per session.

The fake is C (``tests/fixtures/nvml/fake_nvml.c``) loaded by the real nvidia-ml-py in a
subprocess (pynvml loads ``libnvidia-ml.so.1`` by name at init, so the library path must be
set before the process starts).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

NVML_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"


def load_fixture_module(name: str) -> ModuleType:
    """Import ``tests/fixtures/nvml/<name>.py`` by path (tests are not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"nvml_fixture_{name}", NVML_FIXTURES / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def nvml_build() -> ModuleType:
    build = load_fixture_module("build")
    if not build.compiler_available():
        pytest.skip("no C compiler to build the fake NVML driver")
    return build


@pytest.fixture(scope="session")
def fake_nvml_dir(nvml_build: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the fake ``libnvidia-ml.so.1`` (a current driver)."""
    return Path(nvml_build.build_fake_nvml(tmp_path_factory.mktemp("nvml"))).parent


@pytest.fixture(scope="session")
def old_driver_nvml_dir(nvml_build: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake driver without the newer calls: memory v2, temperature V, clock event reasons."""
    omit = [
        "nvmlDeviceGetMemoryInfo_v2",
        "nvmlDeviceGetTemperatureV",
        "nvmlDeviceGetCurrentClocksEventReasons",
    ]
    lib = nvml_build.build_fake_nvml(tmp_path_factory.mktemp("nvml_old"), omit=omit)
    return Path(lib).parent


@pytest.fixture(scope="session")
def pre_margin_nvml_dir(nvml_build: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake driver from before the thermal margin and the field values calls."""
    omit = ["nvmlDeviceGetMarginTemperature", "nvmlDeviceGetFieldValues"]
    lib = nvml_build.build_fake_nvml(tmp_path_factory.mktemp("nvml_pre_margin"), omit=omit)
    return Path(lib).parent


DriveNvml = Callable[..., dict[str, Any]]


@pytest.fixture
def drive_nvml(nvml_build: ModuleType, fake_nvml_dir: Path, tmp_path: Path) -> DriveNvml:
    """``drive_nvml(scenario_dict, plan_dict, lib_dir=None) -> result dict`` (drive.py)."""

    def drive(
        scenario: dict[str, Any] | None, plan: dict[str, Any], lib_dir: Path | None = None
    ) -> dict[str, Any]:
        path = None
        if scenario is not None:
            path = tmp_path / "scenario.json"
            path.write_text(json.dumps(scenario))
        env = nvml_build.scenario_env(lib_dir or fake_nvml_dir, path)
        done = subprocess.run(
            [sys.executable, str(NVML_FIXTURES / "drive.py"), json.dumps(plan)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    return drive
