"""Cost of one sampler tick on 8 fake GPUs through the real nvidia-ml-py, against a baseline.

Builds the fake driver (tests/fixtures/nvml) into a temporary directory and times, in child
processes with it on LD_LIBRARY_PATH and 8 Hopper-like GPUs that offer every reading
(thermal margin, T.Limit fields, throttle counters, GPM): ``NvmlSource.sample()``, one
``Sampler.sample_once()`` (sample + host + history + subscribers) and the bare cost of one
NVML call, for this tree and for the package as it was at ``--baseline`` (a git revision,
extracted with ``git archive``: by default the sampler before the thermal margin, the
throttle counters and the margin alarms). Prints both and the ratio.

On a real GPU box, ``--real`` times the installed driver with this tree only.

    python benchmarks/gpu_sampling.py [--baseline REV] [--repeat N] [--real]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NVML = ROOT / "tests" / "fixtures" / "nvml"
SCENARIO = NVML / "scenarios" / "eight_hopper_gpus.json"
#: the package before this sampler learned the margin, the field values and the counters
BASELINE = "41860d9801c77fe0fa152a8bfc977ae743875e60"


def _build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fake_nvml_build", NVML / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _per_call_us(fn, repeat: int, clock=time.thread_time) -> float:  # type: ignore[no-untyped-def]
    """The fastest of 7 batches of ``repeat`` calls, in µs per call (the least disturbed).

    ``clock``: this thread's CPU time by default: what a tick costs the process, and a figure
    that other programs on a busy machine do not inflate (``time.perf_counter`` for wall time).
    """
    fn()  # warm-up: static reads, capability probes
    batches = []
    for _ in range(7):
        start = clock()
        for _ in range(repeat):
            fn()
        batches.append((clock() - start) / repeat * 1e6)
    return min(batches)


def measure(repeat: int) -> dict[str, float]:
    """Time this process's ``ludwig_nb`` against the driver it loads (µs)."""
    import pynvml

    from ludwig_nb.gpu import HostSource, NvmlSource, Sampler

    source = NvmlSource()
    if not source.available:
        sys.exit(f"no GPU to time: {source.reason}")
    gpus = source.sample()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    sampler = Sampler(source, HostSource())
    sampler.subscribe(lambda snap: None)
    return {
        "devices": float(len(gpus)),
        "one_call_us": _per_call_us(
            lambda: pynvml.nvmlDeviceGetTemperature(handle, 0), repeat * 20
        ),
        "sample_us": _per_call_us(source.sample, repeat),
        "tick_us": _per_call_us(sampler.sample_once, repeat),
        "tick_wall_us": _per_call_us(sampler.sample_once, repeat, time.perf_counter),
    }


def _child(tree: Path, env: dict[str, str], repeat: int) -> dict[str, float]:
    child_env = {**env, "PYTHONPATH": str(tree), "LUDWIG_NB_BENCH_CHILD": "1"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--repeat", str(repeat)]
    done = subprocess.run(cmd, env=child_env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the timing child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _fastest(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: min(run[key] for run in runs) for key in runs[0]}


def _extract(revision: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "ludwig_nb"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        sys.exit(f"git archive {revision}: {archive.stderr.decode()[-500:]}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _report(now: dict[str, float], before: dict[str, float], revision: str) -> None:
    print(f"devices: {now['devices']:.0f} (fake Hopper GPUs, every reading offered)")
    print(f"one NVML call through nvidia-ml-py:  {now['one_call_us']:8.2f} µs")
    print(f"{'CPU time per call':36}{'this tree':>12}{f'at {revision[:9]}':>16}{'ratio':>8}")
    rows = (
        ("sample_us", "NvmlSource.sample(), 8 GPUs"),
        ("tick_us", "Sampler tick"),
        ("tick_wall_us", "Sampler tick, wall time"),
    )
    for key, label in rows:
        print(f"{label:36}{now[key]:10.0f} µs{before[key]:12.0f} µs{now[key] / before[key]:8.2f}")
    share = now["tick_us"] / 1e6 * 100
    print(f"sampler share of one core at 1 Hz:  {share:8.3f} % (goal: under 1 % of a step)")
    print(f"load average now: {Path('/proc/loadavg').read_text().split()[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true", help="time the installed driver")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="child processes per side")
    args = parser.parse_args()
    if os.environ.get("LUDWIG_NB_BENCH_CHILD"):
        print(json.dumps(measure(args.repeat)))
        return
    if args.real:
        figures = measure(args.repeat)
        _report(figures, figures, "this tree")
        return
    build = _build_module()
    with tempfile.TemporaryDirectory() as tmp:
        lib_dir = Path(build.build_fake_nvml(Path(tmp) / "lib")).parent
        env = build.scenario_env(lib_dir, SCENARIO)
        baseline = _extract(args.baseline, Path(tmp))
        befores, nows = [], []
        for _ in range(args.rounds):  # alternating: a busy spell hits both sides
            befores.append(_child(baseline, env, args.repeat))
            nows.append(_child(ROOT, env, args.repeat))
        _report(_fastest(nows), _fastest(befores), args.baseline)


if __name__ == "__main__":
    main()
