"""Every run writes system_resource_usage.json; Ludwig's own profiles import with units fixed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.runs import train
from ludwig_nb.runs.monitoring import sampler_of
from ludwig_nb.runs.profile import PROFILE_FILE, import_ludwig_profile, load_profile

CONFIG = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 30, batch_size: 4, early_stop: -1}
gpu_watch: {simulate: true, interval: 0.25}
"""


@pytest.fixture
def df():
    rng = np.random.default_rng(0)
    a = rng.normal(size=400)
    return pd.DataFrame({"a": a, "y": a > 0})


def test_a_run_writes_its_profile_with_phases_steps_and_the_simulated_gpu(df, tmp_path):
    run = train(
        CONFIG, df, results_dir=tmp_path / "r", registry_dir=tmp_path / "reg", threads=1, wait=True
    )
    assert run.status == "completed"
    data = json.loads((run.directory / PROFILE_FILE).read_text())
    summary = data["summary"]
    assert summary["steps"] == run.step
    assert summary["steps"] == len(run.steps)
    assert summary["samples_trained"] == int(run.steps["batch_size"].sum())
    assert summary["phase_s"]["training"] > 0 and summary["phase_s"]["preprocessing"] > 0
    assert summary["steps_per_s"] == pytest.approx(
        summary["steps"] / summary["phase_s"]["training"]
    )
    assert data["code_block_tag"] == "run" and "training" in data["phases"]
    assert data["total_execution_time"] == pytest.approx(summary["total_s"] * 1e6)
    for sample in data["samples"]:
        assert sample["phase"] in {
            "queued",
            "preprocessing",
            "training",
            "evaluation",
            "checkpoint",
            "other",
        }
        assert sample["gpus"][0]["name"].startswith("Simulated")
    sampler = sampler_of(run)
    assert len(data["samples"]) >= 2, (sampler.ticks, sampler.running, summary["total_s"])
    assert summary["gpus"]["0"]["energy_source"] == "power_integral"  # no counter in the sim
    frame = run.profile
    assert len(frame) == len(data["samples"]) == summary["sample_count"]
    assert {"phase", "step", "elapsed_s", "gpu0_memory_used", "host_process_rss"} <= set(frame)
    assert frame["step"].is_monotonic_increasing
    assert run.profile_summary["steps"] == summary["steps"]


def test_a_run_without_gpu_watch_still_has_phase_timing(df, tmp_path):
    config = CONFIG.replace("{simulate: true, interval: 0.25}", "{enabled: false}")
    run = train(
        config, df, results_dir=tmp_path / "r", registry_dir=tmp_path / "reg", threads=1, wait=True
    )
    data = load_profile(run.directory)
    assert data["samples"] == [] and data["summary"]["steps"] == run.step
    assert data["summary"]["phase_s"]["training"] > 0
    assert run.profile.empty


def test_ludwig_profiles_import_with_gpu_memory_in_bytes(tmp_path):
    tag = tmp_path / "exp" / "system_resource_usage" / "training"
    tag.mkdir(parents=True)
    for n, (used, secs) in enumerate([(40960, 1.0), (20480, 3.0)]):
        record = {
            "code_block_tag": "training",
            "total_execution_time": secs * 1e6,
            "max_cpu_memory_usage": 1000 + n,
            "cuda_0_max_memory_used": used,
            "cuda_0_average_memory_used": used / 2,
            "num_cpu": 2,
        }
        (tag / f"run_{n}.json").write_text(json.dumps(record))
    data = import_ludwig_profile(tmp_path / "exp")
    phase = data["phases"]["training"]
    assert phase["cuda_0_max_memory_used"] == 30720 * 2**20  # mean of two runs, MiB -> bytes
    assert data["summary"]["phase_s"] == {"training": 2.0}
    assert data["summary"]["peak_gpu_memory"] == 30720 * 2**20
    assert load_profile(tmp_path / "exp")["source"] == "ludwig_profiler"


def test_missing_and_broken_profiles_say_where(tmp_path):
    with pytest.raises(FileNotFoundError, match="no resource profile at"):
        load_profile(tmp_path)
    (tmp_path / PROFILE_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_profile(tmp_path)


_TRAIN_UNDER_FAKE_NVML = """
import json, sys
import numpy as np, pandas as pd
from pathlib import Path
from ludwig_nb.runs import train
config = '''
input_features: [{name: a, type: number}]
output_features: [{name: y, type: binary}]
trainer: {epochs: 60, batch_size: 16}
gpu_watch: {enabled: true}
'''
a = np.random.default_rng(0).normal(size=200)
tmp = Path(sys.argv[1])
import ludwig_nb.gpu
ludwig_nb.gpu.kernel_sampler(start=False).interval = 0.25
run = train(config, pd.DataFrame({"a": a, "y": a > 0}), results_dir=tmp / "r",
            registry_dir=tmp / "reg", threads=1, wait=True)
print(json.dumps({"status": run.status, "dir": str(run.directory)}))
"""


def test_a_run_on_the_fake_driver_profiles_energy_throttling_and_gpm(tmp_path):
    """The real path: train() -> monitoring -> the kernel sampler -> NvmlSource -> the real
    nvidia-ml-py -> the fake libnvidia-ml.so.1 (in a subprocess: the library path is read
    at process start)."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
    spec = importlib.util.spec_from_file_location("nvml_build_for_runs", fixtures / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    if not build.compiler_available():
        pytest.skip("no C compiler to build the fake NVML driver")
    lib = build.build_fake_nvml(tmp_path / "lib")
    scenario = json.loads((fixtures / "scenarios" / "profiling.json").read_text())
    scenario["tick_seconds"] = 0.25  # the driver's values advance with wall time
    scenario_path = tmp_path / "scenario.json"
    scenario_path.write_text(json.dumps(scenario))
    env = build.scenario_env(lib.parent, scenario_path)
    done = subprocess.run(
        [sys.executable, "-c", _TRAIN_UNDER_FAKE_NVML, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed"
    data = json.loads((Path(result["dir"]) / PROFILE_FILE).read_text())
    assert len(data["samples"]) >= 3, "the run was too short to sample"
    h200, a100 = data["summary"]["gpus"]["0"], data["summary"]["gpus"]["1"]
    assert h200["name"] == "Fake H200 141GB HBM3e" and h200["energy_source"] == "counter"
    assert h200["energy_j"] > 0  # the counter's difference over the run
    assert h200["mean_sm_activity"] is not None  # GPM on the H200
    assert a100["mean_sm_activity"] is None and a100["energy_j"] is not None  # no GPM there
    assert data["summary"]["throttled_power_s"] is not None
    assert data["cuda_0_max_memory_used"] > 0  # Ludwig's key, in bytes


def _profiled_run(directory, *, final: bool, events: list):
    """What ResourceProfile reads of a run: its id, folder, state and events."""
    from types import SimpleNamespace

    state = SimpleNamespace(is_final=final, status="completed" if final else "training", step=0)
    return SimpleNamespace(
        id="run",
        directory=directory,
        device_index=None,
        state=state,
        steps_trained=(0, 0),
        events=events,
    )


def test_a_long_run_keeps_bounded_memory_and_exact_counters(tmp_path):
    from types import SimpleNamespace

    from ludwig_nb.core import events as ev
    from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
    from ludwig_nb.runs.profile import ResourceProfile

    run = _profiled_run(
        tmp_path,
        final=False,
        events=[
            ev.PhaseChanged(time=0.0, phase="training"),
            ev.RunFinished(time=100.0, status="completed", step=0),
        ],
    )
    sampler = SimpleNamespace(interval=1.0, subscribe=lambda cb: lambda: None)
    profile = ResourceProfile(run, sampler, max_samples=8).start()
    for t in range(100):
        gpu = GpuSample(index=0, time=float(t), energy_consumed=10.0 * t, power_draw=10.0)
        profile._on_snapshot(Snapshot(time=float(t), gpus=(gpu,)))
    samples = profile.samples()
    assert len(samples) <= 9 and samples[0]["time"] == 0.0 and samples[-1]["time"] == 99.0
    assert profile.interval == 16.0 and profile.dropped == 100 - len(samples)
    times = [s["time"] for s in samples]
    assert times == sorted(times) and all(t % 16 == 0 for t in times[:-1])
    summary = profile.to_dict()["summary"]
    assert summary["gpus"]["0"]["energy_j"] == 990.0  # counters: last - first, exact


def test_a_run_that_ends_before_the_first_tick_gets_one_host_reading(tmp_path):
    """A sub-second run (or one whose tick a busy machine delayed) still has its peak RSS:
    ``compare`` showed "–" for it beside a run that had one."""
    from types import SimpleNamespace

    from ludwig_nb.core.gpu_sample import HostSample, Snapshot
    from ludwig_nb.runs.profile import ResourceProfile

    run = _profiled_run(tmp_path, final=True, events=[])
    host = SimpleNamespace(sample=lambda: HostSample(time=5.0, process_rss=300 * 2**20))
    sampler = SimpleNamespace(interval=1.0, subscribe=lambda cb: lambda: None, host_source=host)
    profile = ResourceProfile(run, sampler).start()
    profile.close()
    assert profile.to_dict()["summary"]["host"]["peak_rss"] == 300 * 2**20
    # a run the sampler did tick on keeps its own samples; close adds nothing
    ticked = ResourceProfile(run, sampler).start()
    run.state.is_final = False
    ticked._on_snapshot(Snapshot(time=1.0, host=HostSample(time=1.0, process_rss=2**20)))
    ticked.close()
    assert [s["host"]["process_rss"] for s in ticked.samples()] == [2**20]
