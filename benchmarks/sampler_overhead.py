"""Training throughput with the GPU sampler + %gpu_watch gauges at 1 Hz, against none.

Side by side in one process: a small torch MLP trains in alternating windows with and
without (sampler thread at 1 Hz over 8 fake Hopper GPUs with every reading: thermal margin,
T.Limit fields, throttle counters, GPM, through the real nvidia-ml-py bindings,
an AlarmWatch, a GpuWatchView refreshed by the UI pump at 4 frames/s). Prints steps/s per
condition (median over windows) and the ratio (goal >= 0.99).

    python benchmarks/sampler_overhead.py [--rounds 10] [--window 1.0] [--real]
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


def _train_window(step, seconds: float) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Steps per second over ``seconds`` of wall time, and the CPU seconds per wall second
    that other threads of this process used meanwhile (the watch's own cost)."""
    steps, start = 0, time.perf_counter()
    cpu0, mine0 = time.process_time(), time.thread_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        step()
        steps += 1
    others = (time.process_time() - cpu0) - (time.thread_time() - mine0)
    return steps / elapsed, others / elapsed


def _make_step():  # type: ignore[no-untyped-def]
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 64), torch.randn(256, 1)

    def step() -> None:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    return step


class _Watch:
    """The sampler, alarm watch, view and pump, built once; threads run per window."""

    def __init__(self) -> None:
        from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, parse_threshold
        from ludwig_nb.gpu import HostSource, NvmlSource, Sampler
        from ludwig_nb.runs.alarm_watch import AlarmWatch
        from ludwig_nb.ui.gpu_watch_view import GpuWatchView
        from ludwig_nb.ui.pump import Pump

        self.source = NvmlSource()
        self.sampler = Sampler(self.source, HostSource(), interval=1.0)
        rule = AlarmRule("temperature", parse_threshold("slowdown-5"), action="pause")
        self.alarms = AlarmWatch(self.sampler, AlarmPolicy([rule]), list).start()
        self.view = GpuWatchView(self.sampler, alarms=self.alarms)
        self.pump = Pump(fps=4)
        self.pump.add(self.view)
        self.sampler.sample_once()  # NVML init, static reads and widget creation: one-off
        self.pump.frame()

    def start(self) -> None:
        self.sampler.start()
        self.pump.start()

    def stop(self) -> None:
        self.pump.stop()
        self.sampler.stop()


def measure(rounds: int, window: float) -> None:
    step = _make_step()
    watch = _Watch()
    _train_window(step, 0.5)  # warm-up
    rates: dict[str, list[float]] = {"none": [], "watch": []}
    other_cpu: dict[str, list[float]] = {"none": [], "watch": []}
    for i in range(rounds):
        order = ("none", "watch") if i % 2 == 0 else ("watch", "none")
        for condition in order:
            if condition == "watch":
                watch.start()  # steady state is measured, not the threads' start-up:
                _train_window(step, 0.3)  # the first tick and frame land here
            rate, others = _train_window(step, window)
            rates[condition].append(rate)
            other_cpu[condition].append(others)
            if condition == "watch":
                watch.stop()
    paired = [w / n for w, n in zip(rates["watch"], rates["none"], strict=True)]
    gpus = len(watch.source.sample())
    print(f"GPUs sampled: {gpus}; {rounds} rounds of {window:.1f} s per condition, alternating")
    print(
        f"sampler ticks {watch.sampler.ticks}, view frames {watch.view.frames} in the watch windows"
    )
    print(f"{'condition':<10}{'steps/s (median)':>18}{'min':>10}{'max':>10}")
    for name, values in rates.items():
        print(
            f"{name:<10}{statistics.median(values):>18.1f}{min(values):>10.1f}{max(values):>10.1f}"
        )
    extra = statistics.median(other_cpu["watch"]) - statistics.median(other_cpu["none"])
    print(f"CPU used by the watch threads: {1000 * extra:.1f} ms per second of training")
    print(
        f"ratio watch/none, median of paired windows: {statistics.median(paired):.3f}"
        " (goal >= 0.99)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--window", type=float, default=1.0)
    parser.add_argument("--real", action="store_true", help="sample the installed driver")
    args = parser.parse_args()
    if args.real or os.environ.get("LUDWIG_NB_BENCH_CHILD"):
        from ludwig_nb.gpu import NvmlSource

        if not NvmlSource().available:
            sys.exit(f"no GPU to sample: {NvmlSource().reason}")
        measure(args.rounds, args.window)
        return
    spec = importlib.util.spec_from_file_location("fake_nvml_build", NVML / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    with tempfile.TemporaryDirectory() as tmp:
        lib_dir = Path(build.build_fake_nvml(tmp)).parent
        env = build.scenario_env(lib_dir, NVML / "scenarios" / "eight_hopper_gpus.json")
        env["LUDWIG_NB_BENCH_CHILD"] = "1"
        cmd = [sys.executable, __file__, "--rounds", str(args.rounds), "--window", str(args.window)]
        sys.exit(subprocess.run(cmd, env=env, check=False).returncode)


if __name__ == "__main__":
    main()
