"""What the run's resource profile costs a training step (goal: under 1 % of a 2 ms step).

The profile does nothing per step: once per sampler tick (1 Hz by default) it turns the
snapshot the sampler already read into a tagged row, on the sampler thread. So its cost per
step is (callback time per tick x ticks per second) / steps per second. Measured here, in one
process and side by side:

1. the callback's time per tick for 1 and 8 GPUs (every GpuSample field set), and what that
   is per step of a 2 ms step at 1 Hz;
2. a 2 ms torch step trained in alternating windows with the sampler ticking at 4 Hz (a
   harsher rate than the default) with and without the profile subscribed: steps/s ratio;
3. the one-off cost at the end of a run: summary + system_resource_usage.json for an
   hour of 1 Hz samples on 8 GPUs.

    python benchmarks/profile_cost.py [--rounds 8] [--window 1.0]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot


def _gpu(index: int, t: float) -> GpuSample:
    return GpuSample(
        index=index,
        name="H200",
        uuid=f"GPU-{index}",
        utilization_gpu=97.0,
        utilization_memory=60.0,
        memory_used=80 << 30,
        memory_total=141 << 30,
        temperature=71.0,
        temperature_slowdown=90.0,
        temperature_shutdown=95.0,
        temperature_max=87.0,
        power_draw=650.0,
        power_limit=700.0,
        fan=None,
        clock_sm=1980.0,
        clock_memory=2619.0,
        pstate=0,
        clock_reasons=("sw_power_cap",),
        process_memory=79 << 30,
        time=t,
        energy_consumed=1e6 + t * 650,
        throttled_power_s=t * 0.1,
        throttled_thermal_s=0.0,
        sm_activity=88.0,
        sm_occupancy=40.0,
        tensor_activity=55.0,
        memory_bandwidth=70.0,
    )


def _snapshot(gpus: int, t: float) -> Snapshot:
    host = HostSample(
        time=t,
        cpu_percent=50.0,
        memory_used=10 << 30,
        memory_total=64 << 30,
        process_cpu_percent=12.0,
        process_rss=3 << 30,
    )
    return Snapshot(time=t, gpus=tuple(_gpu(i, t) for i in range(gpus)), host=host)


class _FakeRun:
    """What ResourceProfile reads from a run: state, device, events, steps, directory."""

    def __init__(self, directory: Path) -> None:
        self.id = "bench"
        self.directory = directory
        self.device_index = 0
        self.state = SimpleNamespace(is_final=False, status="training", step=123)
        self.events = [ev.PhaseChanged(time=0.0, phase="training")]
        self.steps_trained = (123, 123 * 32)  # (steps, samples), as Run.steps_trained


def callback_cost(gpus: int, ticks: int = 2000) -> float:
    """Seconds per tick of ResourceProfile._on_snapshot."""
    from ludwig_nb.runs.profile import ResourceProfile

    with tempfile.TemporaryDirectory() as tmp:
        profile = ResourceProfile(_FakeRun(Path(tmp)), sampler=None)
        snaps = [_snapshot(gpus, float(t)) for t in range(ticks)]
        start = time.perf_counter()
        for snap in snaps:
            profile._on_snapshot(snap)
        return (time.perf_counter() - start) / ticks


def end_of_run_cost(gpus: int = 8, seconds: int = 3600) -> tuple[float, int]:
    """Seconds to summarise and write an hour's profile, and the file's bytes."""
    from ludwig_nb.runs.profile import ResourceProfile

    with tempfile.TemporaryDirectory() as tmp:
        run = _FakeRun(Path(tmp))
        run.events = [
            ev.PhaseChanged(time=0.0, phase="training"),
            ev.RunFinished(time=float(seconds), status="completed", step=1),
        ]
        profile = ResourceProfile(run, sampler=None)
        for t in range(seconds):
            profile._on_snapshot(_snapshot(gpus, float(t)))
        start = time.perf_counter()
        path = profile.write()
        return time.perf_counter() - start, path.stat().st_size


def _make_step(target_s: float = 0.002):  # type: ignore[no-untyped-def]
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    width = 256
    while True:
        model = torch.nn.Sequential(
            torch.nn.Linear(64, width), torch.nn.ReLU(), torch.nn.Linear(width, 1)
        )
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, y = torch.randn(256, 64), torch.randn(256, 1)

        def step(model=model, opt=opt, x=x, y=y) -> None:  # type: ignore[no-untyped-def]
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()

        for _ in range(20):
            step()
        began = time.perf_counter()
        for _ in range(50):
            step()
        took = (time.perf_counter() - began) / 50
        if took >= target_s * 0.8 or width > 8192:
            return step, took
        width *= 2


def _window(step, seconds: float) -> float:  # type: ignore[no-untyped-def]
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        step()
        steps += 1
    return steps / elapsed


def side_by_side(rounds: int, window: float) -> tuple[float, float, float]:
    """Median steps/s without and with the profile (sampler at 4 Hz in both) and step s."""
    from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu
    from ludwig_nb.runs.profile import ResourceProfile

    step, step_s = _make_step()
    sampler = Sampler(SimulatedGpu(), HostSource(), interval=0.25)
    sampler.start()
    with tempfile.TemporaryDirectory() as tmp:
        run = _FakeRun(Path(tmp))
        without, with_profile = [], []
        for _ in range(rounds):
            without.append(_window(step, window))
            profile = ResourceProfile(run, sampler).start()  # type: ignore[arg-type]
            with_profile.append(_window(step, window))
            profile.stop()
    sampler.stop()
    return statistics.median(without), statistics.median(with_profile), step_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--window", type=float, default=1.0)
    args = parser.parse_args()
    for gpus in (1, 8):
        cost = callback_cost(gpus)
        per_step = cost * 1.0 / 500  # 1 Hz ticks, 500 steps/s at 2 ms a step
        print(
            f"profile callback, {gpus} GPU(s): {cost * 1e6:.1f} µs per tick -> "
            f"{per_step * 1e9:.0f} ns per 2 ms step at 1 Hz = {100 * per_step / 0.002:.4f} % "
            "(goal < 1 %)"
        )
    took, size = end_of_run_cost()
    print(
        f"end of run, 1 h at 1 Hz on 8 GPUs: {took:.2f} s to summarise and write "
        f"{size / 2**20:.1f} MiB (once, after the last step)"
    )
    base, profiled, step_s = side_by_side(args.rounds, args.window)
    print(
        f"side by side, {step_s * 1e3:.2f} ms step, sampler at 4 Hz: {base:.0f} steps/s "
        f"without, {profiled:.0f} with the profile: ratio {profiled / base:.4f}"
    )


if __name__ == "__main__":
    main()
