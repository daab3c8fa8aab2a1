"""Throttle controller on the simulated GPU: settling time, overshoot, hold band and the
throughput lost against the ideal duty, for three heating rates, side by side with the
``pause`` alarm (bang-bang: pause at the threshold, resume 5 °C below) on the same card.

Virtual time, one reading a second (the sampler's default), the card's full-load
equilibrium at 95 °C, slowdown at 87 °C, target ``slowdown-5`` = 82 °C. The simulated card
is a first-order RC model (``gpu/simulated.py``); real cards also have a fast die
component and fan curves, so these figures are for the law, not for a real card.

* settle: the first time after which the reading stays within ±2 °C (±1 °C) of the target;
* overshoot: the peak above the target;
* hold p-p: peak to peak over the second half of the run;
* work: trained seconds (integral of the duty) over the run, against the oracle that
  trains at full duty until the target and then at exactly the duty the target allows
  (``(target - ambient) / (hot - ambient)``): "lost" is what the controller gives up
  versus that upper bound.

    python benchmarks/throttle.py [--seconds 1800] [--quantise]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ludwig_nb.core.throttle import ThrottleController, gains_for
from ludwig_nb.gpu.simulated import SimulatedGpu, ThermalProfile

TARGET = 82.0
Law = Callable[[float, float], float]  # (reading, now) -> duty


def simulate(heat_tau: float, law: Law, seconds: int, quantise: bool, metric: str = "temperature"):
    now, duty = [0.0], [1.0]
    gpu = SimulatedGpu(
        load=lambda: duty[0],
        profile=ThermalProfile(heat_tau=heat_tau, cool_tau=0.75 * heat_tau),
        clock=lambda: now[0],
        wall_clock=lambda: now[0],
    )
    trace = []
    for second in range(seconds):
        now[0] = float(second)
        sample = gpu.sample()[0]
        value = sample.temperature if metric == "temperature" else sample.power_draw
        value = float(round(value)) if quantise else float(value)
        duty[0] = law(value, now[0])
        trace.append((now[0], value, duty[0]))
    return trace


def pi_law(metric: str = "temperature", target: float = TARGET) -> Law:
    controller = ThrottleController(target, gains_for(metric, target))
    return lambda value, now: controller.update(value, now).duty


def pause_law(gap: float = 5.0) -> Law:
    state = {"paused": False}

    def law(value: float, now: float) -> float:
        if state["paused"] and value < TARGET - gap:
            state["paused"] = False
        elif not state["paused"] and value >= TARGET:
            state["paused"] = True
        return 0.0 if state["paused"] else 1.0

    return law


def oracle_law(ideal: float) -> Law:
    reached = {"at": False}

    def law(value: float, now: float) -> float:
        reached["at"] = reached["at"] or value >= TARGET
        return ideal if reached["at"] else 1.0

    return law


def settle_time(trace, target: float, band: float) -> float | None:
    for i in range(len(trace)):
        if all(abs(v - target) <= band for _, v, _ in trace[i:]):
            return trace[i][0]
    return None


def work(trace) -> float:
    return sum(d for _, _, d in trace)


def _fmt(value: float | None) -> str:
    return "never" if value is None else f"{value:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=1800)
    parser.add_argument("--quantise", action="store_true", help="whole-°C readings, as NVML")
    args = parser.parse_args()
    p = ThermalProfile()
    ideal = (TARGET - p.ambient) / (p.hot - p.ambient)
    print(
        f"target {TARGET:.0f} °C, ideal duty {ideal:.3f}, {args.seconds} s virtual, "
        f"readings {'whole °C' if args.quantise else '0.1 °C'}"
    )
    header = (
        f"{'heat tau':>8} {'law':>6} {'settle±2':>9} {'settle±1':>9} {'overshoot':>9} "
        f"{'hold p-p':>8} {'mean duty':>9} {'work/oracle':>11} {'lost':>6}"
    )
    print(header)
    for tau in (6.0, 30.0, 120.0):
        oracle = work(simulate(tau, oracle_law(ideal), args.seconds, args.quantise))
        for name, law in (("PI", pi_law()), ("pause", pause_law())):
            trace = simulate(tau, law, args.seconds, args.quantise)
            late = [v for t, v, _ in trace if t >= args.seconds / 2]
            done = work(trace)
            steady = [d for t, d in ((t, d) for t, _, d in trace) if t >= args.seconds / 2]
            print(
                f"{tau:>6.0f} s {name:>6} {_fmt(settle_time(trace, TARGET, 2.0)):>9} "
                f"{_fmt(settle_time(trace, TARGET, 1.0)):>9} "
                f"{max(v for _, v, _ in trace) - TARGET:>+7.1f}°C {max(late) - min(late):>6.1f}°C "
                f"{sum(steady) / len(steady):>9.3f} {done / oracle:>11.3f} "
                f"{100 * (1 - done / oracle):>5.1f}%"
            )
    print("\npower target 250 W (instant power model):")
    trace = simulate(30.0, pi_law("power", 250.0), 300, args.quantise, metric="power")
    late = [v for t, v, _ in trace if t >= 150]
    ideal_w = (250.0 - p.idle_power) / ((p.power_limit - p.idle_power) * 0.97)
    print(
        f"  settle ±5 W {_fmt(settle_time(trace, 250.0, 5.0))}, overshoot "
        f"{max(v for _, v, _ in trace) - 250:+.1f} W (first reading, before engaging), "
        f"hold {min(late):.1f}..{max(late):.1f} W, duty {trace[-1][2]:.3f} vs ideal "
        f"{ideal_w:.3f}"
    )


if __name__ == "__main__":
    main()
