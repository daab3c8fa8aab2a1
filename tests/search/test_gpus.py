"""Fractional ``gpu_resources_per_trial``: trials packed onto GPUs, each told its device and
its memory cap. The GPUs come from the real nvidia-ml-py over the fake libnvidia-ml.so.1
(tests/fixtures/nvml, two GPUs); the one seam is the torch device (no CUDA here): trials
placed on ``cuda:<i>`` train on the CPU, through the real search path."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ludwig_nb.search.gpus import GpuPacker, trial_memory_limit, visible_gpus

ROOT = Path(__file__).resolve().parents[2]
NVML = ROOT / "tests" / "fixtures" / "nvml"


def test_half_a_gpu_packs_two_trials_per_gpu_spread_over_the_gpus_first():
    packer = GpuPacker(2, 0.5)
    assert packer.capacity == 4
    assert [packer.place() for _ in range(4)] == [0, 1, 0, 1]
    assert packer.place() is None and not packer.has_room()
    assert packer.load(0) == 1.0
    packer.release(1)
    assert packer.has_room() and packer.place() == 1


def test_shares_that_do_not_divide_a_gpu_leave_the_rest_unused():
    packer = GpuPacker(1, 0.3)
    assert packer.capacity == 3
    assert [packer.place() for _ in range(4)] == [0, 0, 0, None]
    assert packer.load(0) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        GpuPacker(0, 0.5)


def test_cuda_visible_devices_narrows_the_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert visible_gpus(lambda: (2, "")) == (1, "")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    count, reason = visible_gpus(lambda: (2, ""))
    assert count == 0 and "CUDA_VISIBLE_DEVICES" in reason
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert visible_gpus(lambda: (0, "NVML: no driver")) == (0, "NVML: no driver")
    assert trial_memory_limit(0.30000000000000004) == 0.3


def _fake_nvml(tmp_path: Path) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("nvml_fixture_build_search", NVML / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    if not build.compiler_available():
        pytest.skip("no C compiler to build the fake NVML driver")
    lib_dir = build.build_fake_nvml(tmp_path / "nvml").parent
    env = build.scenario_env(lib_dir, NVML / "scenarios" / "ramp.json")  # two GPUs
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


SCRIPT = """
import json, sys
import numpy as np, pandas as pd
from ludwig_nb.search import gpus as search_gpus, hyperopt

search_gpus.device_name = lambda index: "cpu"  # the seam: this machine has no CUDA
devices = []
real = search_gpus.device_name
rng = np.random.default_rng(0)
a = rng.normal(size=200)
df = pd.DataFrame({"a": a, "y": a > 0})
config = '''
input_features: [{name: a, type: number}]
output_features: [{name: y, type: binary}]
trainer: {epochs: 2, batch_size: 16}
hyperopt:
  parameters:
    trainer.learning_rate: {space: loguniform, lower: 0.001, upper: 0.1}
  search_alg: {type: random, random_state_seed: 1}
  executor: {num_samples: 5, gpu_resources_per_trial: 0.5}
'''
search = hyperopt(config, df, name="gpus", results_dir=sys.argv[1] + "/results",
                  registry_dir=sys.argv[1] + "/registry", threads=1, wait=True)
print(json.dumps({
    "error": None if search.error is None else str(search.error),
    "concurrency": search.concurrency,
    "trials": [{"gpu": r.gpu, "state": r.state, "started": r.started, "ended": r.ended,
                "limit": r.run.config["gpu_watch"]["gpu_memory_limit"],
                "device": r.run.device} for r in search.records()],
    "gpu_cells": [search.trials.shape[0]],
}))
"""


def test_a_search_packs_half_gpu_trials_two_per_gpu_with_the_gpus_memory_cap(tmp_path):
    env = _fake_nvml(tmp_path)
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["error"] is None
    assert out["concurrency"] == 4  # auto: 2 GPUs x 2 trials each
    trials = out["trials"]
    assert [t["state"] for t in trials] == ["completed"] * 5
    assert [t["gpu"] for t in trials[:4]] == [[0, 0.5], [1, 0.5], [0, 0.5], [1, 0.5]]
    # the cap is the GPU's packed shares when the trial starts (CUDA's cap is per process)
    assert [t["limit"] for t in trials[:4]] == [0.5, 0.5, 1.0, 1.0]
    assert all(t["device"] == "cpu" for t in trials)  # the seam: placed on cuda:i, ran here
    # the fifth waited for a share: it started once a trial had ended, on that trial's GPU
    fifth = trials[4]
    freed = [t for t in trials[:4] if t["ended"] <= fifth["started"]]
    assert freed and fifth["gpu"][0] in {t["gpu"][0] for t in freed}
    for gpu in (0, 1):  # never more than two trials at once on one GPU
        on = [t for t in trials if t["gpu"][0] == gpu]
        for t in on:
            at_once = [u for u in on if u["started"] <= t["started"] < u["ended"]]
            assert len(at_once) <= 2
