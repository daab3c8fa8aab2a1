"""Time lost to throttling: the counters' figure against the sampled flags, on the simulated GPU.

The simulated card's thermal counters are exact (the time above the slowdown point is
integrated along the temperature's path between samples, ``gpu/simulated.py``), as NVML's
counters are on a real card. The sampled estimate counts a whole interval as throttled when
the sample at its end shows a thermal reason: what a monitor without the counters can do.
Both come from ``core.throttle_time`` over the same samples. Goal: the two within 5
percentage points of the run at the sampler's default interval (1 s). Where the load depends
on time only, a third column samples the flags every 0.05 s: the truth both converge to.

Virtual time; each scenario is a training run with its own load pattern:

* realistic card (2 min time constants), training at full load with a 40 s evaluation at
  a quarter load every 5 min;
* the demo card (6 s time constants), same schedule: many more crossings;
* the demo card under an on/off load (20 s on, 10 s off): it crosses its slowdown point
  twice a cycle, at times that fall anywhere between two samples;
* the demo card kept at its slowdown point by switching the load off whenever the reading
  reaches it: the reading crosses the flag's edge every few seconds and the load follows the
  very samples the flags are read from, the sampled estimate's worst case (adversarial: not
  held to the goal).

    python benchmarks/throttle_time.py [--seconds 1800] [--intervals 1,2,5]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ludwig_nb.core.gpu_sample import GpuSample
from ludwig_nb.core.throttle_time import throttle_time
from ludwig_nb.gpu.simulated import SimulatedGpu, ThermalProfile

GOAL_POINTS = 5.0
Load = Callable[[float, GpuSample | None], float]  # (now, last sample) -> load in [0, 1]


def _evaluations(now: float, _: GpuSample | None) -> float:
    return 0.25 if now % 300.0 >= 260.0 else 1.0


def _on_off(now: float, _: GpuSample | None) -> float:
    return 1.0 if now % 30.0 < 20.0 else 0.0


def _at_slowdown(now: float, last: GpuSample | None) -> float:
    del now
    hot = last is not None and last.temperature is not None and last.temperature >= 87.0
    return 0.0 if hot else 1.0


#: name -> (the card, its load, whether the load depends on time only)
SCENARIOS: dict[str, tuple[Callable[[], ThermalProfile], Load, bool]] = {
    "realistic card, evaluations": (ThermalProfile, _evaluations, True),
    "demo card, evaluations": (ThermalProfile.demo, _evaluations, True),
    "demo card, 20 s on / 10 s off": (ThermalProfile.demo, _on_off, True),
    "demo card kept at slowdown": (ThermalProfile.demo, _at_slowdown, False),
}
FINE = 0.05  # seconds between the truth's samples


def run(
    profile: ThermalProfile, load: Load, seconds: float, interval: float
) -> tuple[float, float]:
    """The run's throttled share (%) from the counters and from the flags."""
    now, current = [0.0], [1.0]
    gpu = SimulatedGpu(
        load=lambda: current[0], profile=profile, clock=lambda: now[0], wall_clock=lambda: now[0]
    )
    samples: list[tuple[float, GpuSample]] = []
    last: GpuSample | None = None
    for k in range(round(seconds / interval) + 1):
        t = k * interval
        now[0] = t
        current[0] = load(float(int(t)), last)  # loads change on whole seconds
        (last,) = gpu.sample()
        samples.append((t, last))
    counters = throttle_time(samples)
    flags = throttle_time([(t, {"clock_reasons": list(s.clock_reasons)}) for t, s in samples])
    assert counters is not None and flags is not None
    return 100.0 * (counters.share or 0.0), 100.0 * (flags.share or 0.0)


Row = tuple[str, float, float, float, float | None]


def measure(seconds: float, intervals: list[float]) -> list[Row]:
    """``(scenario, interval, counters %, flags %, truth %)`` per scenario and interval.

    ``truth``: the flags every 0.05 s, where the load depends on time only (else None).
    """
    rows: list[Row] = []
    for name, (profile, load, timed) in SCENARIOS.items():
        truth = run(profile(), load, seconds, FINE)[1] if timed else None
        for interval in intervals:
            counted, flagged = run(profile(), load, seconds, interval)
            rows.append((name, interval, counted, flagged, truth))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--intervals", default="1,2,5")
    args = parser.parse_args()
    intervals = [float(x) for x in args.intervals.split(",")]
    print(
        f"{'scenario':30} {'interval':>8} {'counters':>9} {'flags':>7} {'points':>7}"
        f" {'truth':>7}  goal"
    )
    worst = {True: 0.0, False: 0.0}
    for name, interval, counted, flagged, truth in measure(args.seconds, intervals):
        points = abs(counted - flagged)
        held = SCENARIOS[name][2]
        if interval == 1.0:
            worst[held] = max(worst[held], points)
        verdict = ("ok" if points <= GOAL_POINTS else "over") if held else "(adversarial)"
        exact = "" if truth is None else f"{truth:6.1f}%"
        print(
            f"{name:30} {interval:7.0f}s {counted:8.1f}% {flagged:6.1f}% {points:7.2f}"
            f" {exact:>7}  {verdict}"
        )
    print(
        f"worst difference at the 1 s default: {worst[True]:.2f} points on the time-driven"
        f" loads (goal <= {GOAL_POINTS:g}), {worst[False]:.2f} on the adversarial one"
    )


if __name__ == "__main__":
    main()
