"""The Ludwig engine against the built-in engine: time to first step and steps/s, same config,
same data, side by side in one process (run it with the Ludwig venv's python, which has both).

Each run goes through ``ludwig_nb.train`` (what a user calls), on the churn demo by default.
"Time to first step" is from ``train()`` to the first StepFinished event (it includes, for
the first Ludwig run in the process, Ludwig's import); "steps/s" is the stable rate: steps
between the first and the last StepFinished over that wall time minus the evaluations and
checkpoints inside it. Runs alternate (builtin, ludwig, builtin, ...); the best of each counts.

    $(bash scripts/setup/ludwig_env.sh | tail -1)/bin/python benchmarks/ludwig_engine.py \
        [--epochs 3] [--repeats 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def _measure(engine: str, config: str, dataset: Any, threads: int) -> dict[str, float]:
    from ludwig_nb.core import events as ev
    from ludwig_nb.runs import train

    with tempfile.TemporaryDirectory() as tmp:
        began = time.time()
        run = train(
            config,
            dataset,
            engine=engine,
            results_dir=Path(tmp) / "r",
            registry_dir=Path(tmp) / "reg",
            threads=threads,
            wait=True,
        )
        total = time.time() - began
        if run.status != "completed":
            raise RuntimeError(f"{engine}: {run.status}: {run.state.error}")
        events = list(run.events)
    steps = [e for e in events if isinstance(e, ev.StepFinished)]
    first, last = steps[0], steps[-1]
    pauses = sum(
        e.time - e.start_time  # type: ignore[attr-defined]
        for e in events
        if isinstance(e, ev.EvaluationFinished | ev.CheckpointSaved)
        and first.time < e.time <= last.time
    )
    span = last.time - first.time - pauses
    return {
        "first_step_s": first.time - began,
        "steps_per_s": (len(steps) - 1) / span,
        "median_step_ms": 1000 * statistics.median(s.time - s.start_time for s in steps[1:]),
        "total_s": total,
        "steps": float(len(steps)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from ludwig_nb.data import demo_config, demo_dataset

    config = demo_config("churn").read_text().replace("epochs: 200", f"epochs: {args.epochs}")
    dataset = str(demo_dataset("churn"))
    results: dict[str, list[dict[str, float]]] = {"builtin": [], "ludwig": []}
    for _ in range(args.repeats):
        for engine, runs in results.items():
            runs.append(_measure(engine, config, dataset, args.threads))
    print(
        f"churn demo, {args.epochs} epochs, batch 64, threads {args.threads}, "
        f"best of {args.repeats} (first Ludwig run includes Ludwig's import)"
    )
    for engine, runs in results.items():
        first = runs[0]["first_step_s"]
        later = min(r["first_step_s"] for r in runs[1:]) if len(runs) > 1 else float("nan")
        rate = max(r["steps_per_s"] for r in runs)
        step_ms = min(r["median_step_ms"] for r in runs)
        print(
            f"  {engine:8s} first step {first:6.2f} s (first run), {later:6.2f} s (later); "
            f"{rate:7.1f} steps/s, median step {step_ms:5.1f} ms, "
            f"{runs[-1]['steps']:.0f} steps"
        )
    b, lw = results["builtin"], results["ludwig"]
    rate = max(r["steps_per_s"] for r in lw) / max(r["steps_per_s"] for r in b)
    first = min(r["first_step_s"] for r in lw[1:] or lw) / min(
        r["first_step_s"] for r in b[1:] or b
    )
    print(f"  ratio ludwig/builtin: steps/s {rate:.2f}, first step (later runs) {first:.2f}")


if __name__ == "__main__":
    main()
