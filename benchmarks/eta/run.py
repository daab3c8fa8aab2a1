"""ETA benchmark report: ``python -m benchmarks.eta.run [--quick] [--seeds N] [--first-seed S]``.

Replays the synthetic scenarios (``scenarios.py``) and the recorded traces
(``traces/*.ndjson``) through our estimator and the peers' replicas and prints, per
scenario and overall: MAPE of the remaining time at 10/25/50/75 % (%), the ratio
ours / best peer, the MAPE at 5-20 % of the run after a regime change, and our 80 %
interval coverage. Reported seeds start at 0; calibration used seeds from 1000 on
(``--first-seed 1000``), so the figures printed by default are not the ones tuned on.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks.eta.peers import PEERS
from benchmarks.eta.replay import AFTER_CHANGE, OURS, Scores, replay
from benchmarks.eta.scenarios import SCENARIOS, STATIONARY, Trace, generate
from benchmarks.eta.traces import LOADED_DIR, TRACES_DIR, load_traces

NAMES = (OURS, *(cls.name for cls in PEERS))
SHORT = {
    OURS: "ours",
    "tqdm": "tqdm",
    "fastprogress": "fastpr",
    "hf_notebook/keras": "hf/keras",
    "rich": "rich",
    "detectron2": "d2",
    "composer": "composer",
}


def _pct(values: list[float]) -> float:
    return 100.0 * statistics.fmean(values) if values else float("nan")


def _row(label: str, s: Scores) -> tuple[str, float, float]:
    mape = {n: _pct(s.ape.get(n, [])) for n in NAMES}
    best = min(mape[n] for n in NAMES if n != OURS)
    post = {n: _pct(s.post.get(n, [])) for n in NAMES}
    best_post = min((post[n] for n in NAMES if n != OURS), default=float("nan"))
    cover = 100.0 * sum(s.cover) / len(s.cover) if s.cover else float("nan")
    cells = " ".join(f"{mape[n]:7.1f}" for n in NAMES)
    print(
        f"{label:14s} {cells}  {mape[OURS] / best:6.2f}  "
        f"{post[OURS]:6.1f} {best_post:6.1f}  {cover:5.0f}"
    )
    return label, mape[OURS], best


def _header(title: str) -> None:
    print(f"\n{title}")
    names = " ".join(f"{SHORT[n]:>7s}" for n in NAMES)
    print(f"{'scenario':14s} {names}  {'ratio':>6s}  {'post':>6s} {'p.best':>6s}  {'cov%':>5s}")


def _post_detail(rows: list[tuple[str, Scores]]) -> None:
    """Ours after a regime change, by offset from the change's first step; and, for
    information only, pooled from the step where the change was complete (ramp end)."""
    offsets = " ".join(f"{'+' + format(100 * f, '.0f') + '%':>6s}" for f in AFTER_CHANGE)
    print("\npost-change error, ours (%), from the change's first step (the goal: <= 3)")
    print(f"{'scenario':14s} {offsets}  {'pooled':>6s}  {'from end':>8s}")
    for label, s in rows:
        cells = " ".join(f"{_pct(s.post_at.get(f, [])):6.1f}" for f in AFTER_CHANGE)
        print(f"{label:14s} {cells}  {_pct(s.post.get(OURS, [])):6.1f}  {_pct(s.settled):8.1f}")


def _score_all(traces: list[Trace]) -> Scores:
    total = Scores()
    for trace in traces:
        total.extend(replay(trace))
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 seeds, 1000-step runs")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--traces", default=str(TRACES_DIR), help="folder of events.ndjson")
    parser.add_argument(
        "--stress",
        default=str(LOADED_DIR),
        help="folder of traces recorded under heavy external load, reported apart",
    )
    args = parser.parse_args(argv)
    seeds = 5 if args.quick else args.seeds
    steps = 1000 if args.quick else 2000
    began = time.perf_counter()
    print(f"ETA benchmark: {seeds} seeds from {args.first_seed}, {steps} steps per run")
    print("MAPE of remaining time at 10/25/50/75 % (%); ratio = ours / best peer;")
    print("post = MAPE at 5-20 % of the run after a regime change (ours, best peer);")
    print("cov% = runs' truth inside our 80 % interval at 10..90 %")
    _header("synthetic")
    overall, stationary = Scores(), Scores()
    changed: list[tuple[str, Scores]] = []
    for name in SCENARIOS:
        traces = [generate(name, args.first_seed + k, steps=steps) for k in range(seeds)]
        scores = _score_all(traces)
        _row(name, scores)
        overall.extend(scores)
        if name in STATIONARY:
            stationary.extend(scores)
        if scores.post_at:
            changed.append((name, scores))
    print("-" * 100)
    _row("stationary", stationary)
    _row("OVERALL", overall)
    _post_detail([*changed, ("OVERALL", overall)])
    for folder, label in ((args.traces, "recorded traces"), (args.stress, "stress: heavy load")):
        real = load_traces(folder)
        if not real:
            continue
        _header(f"{label} ({folder})")
        everything = Scores()
        for trace in real:
            scores = replay(trace)
            _row(trace.name[:14], scores)
            everything.extend(scores)
        _row("REAL", everything)
    print(f"\n{time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
