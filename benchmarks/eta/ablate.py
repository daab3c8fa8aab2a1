"""What each part of the ETA is worth: ``python -m benchmarks.eta.ablate [--seeds N]``.

Each row switches one mechanism of ``ludwig_nb.core.eta`` off (by patching it in a
fresh interpreter, so the rows do not leak into each other) and replays the benchmark
(``run.py``'s synthetic scenarios and recorded traces) and the outside check
(``harness.py``). Columns: MAPE of the remaining time on the synthetic runs (all, and the
stationary ones), the post-change MAPE, the 80 % interval's coverage on the stationary
runs, MAPE on the recorded traces and on the heavy-load ones, then the harness's MAPE,
post-change MAPE and stationary coverage. ``--first-seed 1000 --seeds 100`` gives the
calibration seeds. ``--only NAME`` runs one row; ``--tests`` lists, per row, the unit
tests that fail with that part switched off (each part should have one).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from collections.abc import Callable

from benchmarks.eta import harness
from benchmarks.eta.replay import OURS, Scores, replay
from benchmarks.eta.scenarios import SCENARIOS, STATIONARY, generate
from benchmarks.eta.traces import LOADED_DIR, TRACES_DIR, load_traces


def _no_warmup_cut() -> None:
    from ludwig_nb.core.eta import step_time

    step_time.warmup_cut = lambda _prefix, start, end: (start, end - start >= 20)


def _no_change_detection() -> None:
    from ludwig_nb.core.eta.changes import ChangeDetector

    ChangeDetector.observe = lambda _self, _duration: None  # type: ignore[method-assign]


def _no_event_costs() -> None:
    from ludwig_nb.core.eta.event_costs import Cost, EventCosts

    cost = EventCosts.cost

    def zero(self: EventCosts, kind: str, step_s: float, batches: int) -> Cost:
        if kind == "epoch_start":
            return cost(self, kind, step_s, batches)  # type: ignore[arg-type]
        return Cost(0.0, 0.0, 0)

    EventCosts.cost = zero  # type: ignore[assignment,method-assign]


def _first_occurrence_counted() -> None:
    from ludwig_nb.core.eta import event_costs
    from ludwig_nb.core.eta.event_costs import Cost, EventCosts

    cost = EventCosts.cost

    def with_first(self: EventCosts, kind: str, step_s: float, batches: int) -> Cost:
        seen = self._seen[kind]  # type: ignore[index]
        if seen:
            used = seen[-3:]
            value = event_costs.median(used)
            return Cost(value, max(1.4826 * event_costs.mad(used, value), 0.05 * value), 1)
        return cost(self, kind, step_s, batches)  # type: ignore[arg-type]

    EventCosts.cost = with_first  # type: ignore[assignment,method-assign]


def _no_epoch_start_class() -> None:
    from ludwig_nb.core.eta.estimator import EtaEstimator

    init, set_schedule = EtaEstimator.__init__, EtaEstimator.set_schedule

    def new_init(self: EtaEstimator, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        self._es_set = frozenset()

    def new_set(self: EtaEstimator, schedule: object) -> None:
        set_schedule(self, schedule)  # type: ignore[arg-type]
        self._es_set = frozenset()

    EtaEstimator.__init__ = new_init  # type: ignore[method-assign]
    EtaEstimator.set_schedule = new_set  # type: ignore[method-assign,assignment]
    estimate = EtaEstimator.estimate

    def flat(self: EtaEstimator, now: float) -> object:
        schedule = self._schedule
        self._schedule = type(schedule)(
            schedule.total_steps,
            (),
            schedule.evaluations_after,
            schedule.checkpoints_after,
            schedule.batch_size,
            schedule.evaluation_batches,
        )
        try:
            return estimate(self, now)
        finally:
            self._schedule = schedule

    EtaEstimator.estimate = flat  # type: ignore[method-assign,assignment]


def _no_selfcheck() -> None:
    from ludwig_nb.core.eta.step_time import StepRate

    StepRate.level_error = lambda _self, _var: 0.0  # type: ignore[method-assign]


def _no_straggler_cap() -> None:
    from ludwig_nb.core.eta import constants

    constants.STRAGGLER_CAP = math.inf


def _no_tail_pooling() -> None:
    from ludwig_nb.core.eta.step_time import StepRate

    StepRate._pooled_tail = lambda _self, own, _n: own  # type: ignore[method-assign]


def _no_ar1_spread() -> None:
    from ludwig_nb.core.eta import constants

    constants.MAX_RHO = 0.0


def _no_in_progress_allowance() -> None:
    from ludwig_nb.core.eta.estimator import EtaEstimator

    EtaEstimator._next_cost = lambda _self, _costs, _step_s: 0.0  # type: ignore[method-assign]


def _no_swing_blend() -> None:
    from ludwig_nb.core.eta import constants

    constants.SWING_LOG = math.inf


def _no_known_change() -> None:
    from ludwig_nb.core.eta.step_time import StepRate

    StepRate.new_regime = lambda _self, scale=None: None  # type: ignore[method-assign,misc]


ABLATIONS: dict[str, Callable[[], None] | None] = {
    "as shipped": None,
    "warm-up cut (MSER)": _no_warmup_cut,
    "change detection (CUSUM)": _no_change_detection,
    "AR(1) widening of the CUSUM": _no_ar1_spread,
    "event costs": _no_event_costs,
    "first occurrence excluded": _first_occurrence_counted,
    "epoch-start class": _no_epoch_start_class,
    "self-check on past misses": _no_selfcheck,
    "straggler cap (20 medians)": _no_straggler_cap,
    "pooled straggler share": _no_tail_pooling,
    "in-progress allowance": _no_in_progress_allowance,
    "load that comes and goes": _no_swing_blend,
    "known changes (batch, duty)": _no_known_change,
}


def _pct(values: list[float]) -> float:
    return round(100.0 * statistics.fmean(values), 2) if values else math.nan


def _cover(values: list[bool]) -> float:
    return round(100.0 * sum(values) / len(values), 1) if values else math.nan


def measure(first_seed: int, seeds: int, harness_seeds: int) -> dict[str, float]:
    """The figures of one row (the estimator as patched in this interpreter)."""
    overall, stationary = Scores(), Scores()
    for name in SCENARIOS:
        for k in range(seeds):
            s = replay(generate(name, first_seed + k))
            overall.extend(s)
            if name in STATIONARY:
                stationary.extend(s)
    out = {
        "mape": _pct(overall.ape[OURS]),
        "stat": _pct(stationary.ape[OURS]),
        "post": _pct(overall.post[OURS]),
        "cov": _cover(stationary.cover),
    }
    for label, folder in (("real", TRACES_DIR), ("stress", LOADED_DIR)):
        s = Scores()
        for trace in load_traces(folder):
            s.extend(replay(trace))
        out[label] = _pct(s.ape.get(OURS, []))
    h = harness.Scores()
    for name in harness.SCENARIOS:
        for seed in range(first_seed, first_seed + harness_seeds):
            harness.score(harness.generate(name, seed), name, h)
    out["h.mape"] = _pct(h.ape["ours"])
    out["h.post"] = _pct([v for values in h.post.values() for v in values])
    out["h.cov"] = _cover(h.cover)
    out["h.strag"] = round(100.0 * max(h.straggler_shift), 2)
    out["h.mid"] = _pct(h.mid_eval)
    return out


def _failing_tests() -> list[str]:
    """Run ``tests/core/eta`` and the ETA text's tests here (as patched); the names that fail."""
    import pytest

    failed: list[str] = []

    class _Collect:
        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            if report.when == "call" and report.failed:
                failed.append(report.nodeid.split("::")[-1])

    args = ["-q", "-p", "no:cacheprovider", "tests/core/eta", "tests/ui/test_eta_text.py"]
    pytest.main(args, plugins=[_Collect()])
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--harness-seeds", type=int, default=10)
    parser.add_argument("--only", help="run one row (by name) and print it as JSON")
    parser.add_argument(
        "--tests", action="store_true", help="per row, the ETA's unit tests that fail instead"
    )
    args = parser.parse_args(argv)
    if args.only is not None:
        patch = ABLATIONS[args.only]
        if patch is not None:
            patch()
        if args.tests:
            print(json.dumps(_failing_tests()))
        else:
            print(json.dumps(measure(args.first_seed, args.seeds, args.harness_seeds)))
        return 0
    if args.tests:
        print("ETA unit tests that fail with each part switched off")
        for name in ABLATIONS:
            cmd = [sys.executable, "-m", "benchmarks.eta.ablate", "--only", name, "--tests"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            failed = json.loads(out.splitlines()[-1])
            print(f"{name:28s} {len(failed):3d}  {', '.join(failed[:3])}", flush=True)
        return 0
    print(
        f"ETA ablation: {args.seeds} seeds from {args.first_seed} (harness: "
        f"{args.harness_seeds}); each row switches one part off"
    )
    cols = ("mape", "stat", "post", "cov", "real", "stress", "h.mape", "h.post", "h.cov")
    print(f"{'without':28s} " + " ".join(f"{c:>7s}" for c in cols))
    for name in ABLATIONS:
        cmd = [sys.executable, "-m", "benchmarks.eta.ablate", "--only", name]
        cmd += ["--seeds", str(args.seeds), "--first-seed", str(args.first_seed)]
        cmd += ["--harness-seeds", str(args.harness_seeds)]
        row = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        print(f"{name:28s} " + " ".join(f"{row[c]:7.2f}" for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
