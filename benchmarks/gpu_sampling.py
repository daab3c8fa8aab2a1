"""Cost of one GPU sample through the real nvidia-ml-py bindings (8 fake GPUs).

Builds the fake driver (tests/fixtures/nvml) into a temporary directory and re-runs
itself with it on LD_LIBRARY_PATH, then times ``NvmlSource.sample()`` for 8 GPUs, one
``Sampler.sample_once()`` (sample + host + history + subscribers), and the bare binding
cost of one NVML call. On a real GPU box, ``--real`` times the installed driver instead.

    python benchmarks/gpu_sampling.py [--real] [--repeat N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NVML = ROOT / "tests" / "fixtures" / "nvml"


def _build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fake_nvml_build", NVML / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _per_call_us(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    """Median of 5 batches of ``repeat`` calls, in µs per call."""
    fn()  # warm-up: static reads, capability probes
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        batches.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(batches)


def measure(repeat: int) -> None:
    import pynvml

    from ludwig_nb.gpu import HostSource, NvmlSource, Sampler

    source = NvmlSource()
    if not source.available:
        sys.exit(f"no GPU to time: {source.reason}")
    gpus = source.sample()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    one_call = _per_call_us(lambda: pynvml.nvmlDeviceGetTemperature(handle, 0), repeat * 20)
    sample = _per_call_us(source.sample, repeat)
    sampler = Sampler(source, HostSource())
    sampler.subscribe(lambda snap: None)
    tick = _per_call_us(sampler.sample_once, repeat)
    print(f"devices: {len(gpus)} ({gpus[0].name})")
    print(f"one NVML call through nvidia-ml-py:      {one_call:8.2f} µs")
    print(
        f"NvmlSource.sample(), all devices:        {sample:8.1f} µs"
        f" ({sample / len(gpus):.1f} µs per GPU)"
    )
    print(f"Sampler.sample_once() (+host, history):  {tick:8.1f} µs")
    print(f"share of one core at 1 Hz:               {tick / 1e6 * 100:8.4f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true", help="time the installed driver")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    if args.real or os.environ.get("LUDWIG_NB_BENCH_CHILD"):
        measure(args.repeat)
        return
    build = _build_module()
    with tempfile.TemporaryDirectory() as tmp:
        lib_dir = Path(build.build_fake_nvml(tmp)).parent
        env = build.scenario_env(lib_dir, NVML / "scenarios" / "eight_gpus.json")
        env["LUDWIG_NB_BENCH_CHILD"] = "1"
        cmd = [sys.executable, __file__, "--repeat", str(args.repeat)]
        sys.exit(subprocess.run(cmd, env=env, check=False).returncode)


if __name__ == "__main__":
    main()
