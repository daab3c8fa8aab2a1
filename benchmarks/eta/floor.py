"""How low can the post-change error go? ``python -m benchmarks.eta.floor [--seeds N]``.

The post-change goal asks for at most 3 % error at +5, +10, +15 and +20 % of the run after
a regime change's first step. This script measures, on the same synthetic traces and
queries as ``run.py``, what estimators that are *told* about the change score:

* ``ours``: the estimator as shipped (it has to detect the change itself);
* ``told start``: ours, told the change's first step (a new regime starts there);
* ``told end``: ours, told the step where the change is complete (a ramp's end);
* ``mean since end``: ours, with the step time replaced by the plain mean of every step
  since the change was complete: the exact change point plus the location estimate that
  is most efficient for this noise (it ignores stragglers' heavy tail, so it loses on the
  ``realistic`` scenario).

No data-driven estimator knows more than the last two. If they cannot reach the goal at
an offset, the goal is below what the step times can tell there.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys

from benchmarks.eta.replay import AFTER_CHANGE, final_total
from benchmarks.eta.scenarios import Trace, generate
from ludwig_nb.core import events as ev
from ludwig_nb.core.eta import EtaTracker

SCENARIOS = ("throttle", "batch_change", "realistic")
VARIANTS = ("ours", "told start", "told end", "mean since end")


def _score(trace: Trace, variant: str) -> dict[float, float]:
    """Absolute percentage error of the remaining time at each post-change offset."""
    total, end = final_total(trace), trace.events[-1].time
    change, settled = trace.changes[0], trace.settled[0]
    queries = {
        change + math.ceil(f * total): f
        for f in AFTER_CHANGE
        if change + math.ceil(f * total) <= 0.95 * total
    }
    tracker = EtaTracker()
    since_end: list[float] = []
    epoch_starts: frozenset[int] = frozenset()
    out: dict[float, float] = {}
    for event in trace.events:
        if isinstance(event, ev.RunStarted | ev.ScheduleChanged):
            epoch_starts = frozenset(event.schedule.epoch_starts)
        told = {"told start": change, "told end": settled}.get(variant)
        if isinstance(event, ev.StepFinished) and event.step == told:
            est = tracker.estimator
            if est is not None:
                est._rate.new_regime()  # an oracle: it reaches inside on purpose
        tracker.observe(event)
        if not isinstance(event, ev.StepFinished):
            continue
        if event.step >= settled and event.step not in epoch_starts:
            since_end.append(event.time - event.start_time)
        offset = queries.get(event.step + 1)
        if offset is None:
            continue
        estimate = tracker.estimate(event.time)
        truth = end - event.time
        if estimate is None or truth <= 0:
            out[offset] = 1.0
            continue
        remaining = estimate.remaining_s
        if variant == "mean since end" and since_end and estimate.step_s > 0:
            steps_part = estimate.breakdown.get("steps", 0.0)
            remaining += steps_part * (statistics.fmean(since_end) / estimate.step_s - 1.0)
        out[offset] = abs(remaining - truth) / truth
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"post-change MAPE (%), {args.seeds} seeds from {args.first_seed}, 2000-step runs")
    offsets = " ".join(f"{'+' + format(100 * f, '.0f') + '%':>6s}" for f in AFTER_CHANGE)
    print(f"{'scenario':13s} {'variant':15s} {offsets}  {'pooled':>6s}")
    pooled: dict[str, dict[float, list[float]]] = {v: {} for v in VARIANTS}
    for name in SCENARIOS:
        traces = [generate(name, s) for s in seeds]
        for variant in VARIANTS:
            per: dict[float, list[float]] = {}
            for trace in traces:
                for offset, err in _score(trace, variant).items():
                    per.setdefault(offset, []).append(err)
                    pooled[variant].setdefault(offset, []).append(err)
            _print(name, variant, per)
    for variant in VARIANTS:
        _print("OVERALL", variant, pooled[variant])
    return 0


def _print(name: str, variant: str, per: dict[float, list[float]]) -> None:
    cells = " ".join(f"{100 * statistics.fmean(per.get(f, [math.nan])):6.1f}" for f in AFTER_CHANGE)
    everything = [v for values in per.values() for v in values]
    print(f"{name:13s} {variant:15s} {cells}  {100 * statistics.fmean(everything):6.1f}")


if __name__ == "__main__":
    sys.exit(main())
