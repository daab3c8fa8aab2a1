"""Cost of the estimator per step and per estimate: ``python -m benchmarks.eta.perf``.

Feeds 10k, 100k and 1M synthetic steps (evaluations every 1000 steps, a slowdown half
way) and prints microseconds per ``step_finished`` and per ``estimate``, and their ratio
to the 10k run: flat ratios mean O(1) amortised per step. ``--quick`` stops at 100k.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

from ludwig_nb.core.eta import EtaEstimator, Schedule


def _run(steps: int) -> tuple[float, float]:
    rng = random.Random(steps)
    sched = Schedule(
        total_steps=steps,
        epoch_starts=tuple(range(0, steps, 1000)),
        evaluations_after=tuple(range(999, steps, 1000)),
    )
    durations = [
        0.1 * (1.3 if i > steps // 2 else 1.0) * math.exp(rng.gauss(0.0, 0.1)) for i in range(steps)
    ]
    est = EtaEstimator(sched, 0.0)
    t, asked, ask_time = 0.0, 0, 0.0
    began = time.perf_counter()
    for i, d in enumerate(durations):
        t += d
        est.step_finished(i, t)
        if i % 1000 == 999:
            est.interval_finished("evaluation", t, t + 5.0)
            t += 5.0
        if i % 2500 == 0:  # ~4 estimates a second at 0.1 s steps
            a = time.perf_counter()
            est.estimate(t)
            ask_time += time.perf_counter() - a
            asked += 1
    total = time.perf_counter() - began - ask_time
    return 1e6 * total / steps, 1e6 * ask_time / max(1, asked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    base: tuple[float, float] | None = None
    print(f"{'steps':>9s} {'us/step':>8s} {'ratio':>6s} {'us/estimate':>12s} {'ratio':>6s}")
    for n in sizes:
        per_step, per_ask = _run(n)
        base = base or (per_step, per_ask)
        print(
            f"{n:9d} {per_step:8.1f} {per_step / base[0]:6.2f} "
            f"{per_ask:12.1f} {per_ask / base[1]:6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
