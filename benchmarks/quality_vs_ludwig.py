"""Quality against real Ludwig 0.11: the same config, data and split, both engines, one scorer.

Each case of ``quality_cases.py`` (real datasets shipped in pip packages) trains with the
built-in engine and with Ludwig (``engine: ludwig``), side by side in one process, at a fixed
batch size and with ``batch_size: auto``, for two seeds. Both models predict the same test rows
and one scorer scores the predictions: accuracy for binary and category outputs, R² for
number outputs. A case counts as "at Ludwig's quality" when the built-in engine's mean over the
seeds is within 0.01 of Ludwig's or better. Run it with the Ludwig venv's python (it has both):

    $(bash scripts/setup/ludwig_env.sh | tail -1)/bin/python benchmarks/quality_vs_ludwig.py \
        [--set dev|holdout|all] [--cases a,b] [--batch fixed|auto|both] [--seeds 42,7]

It prints one line per run, then per case the means and the count of cases within 0.01 of
Ludwig or better, for each batch mode, with the load average at the start and the end.
``--ludwig-cache FILE`` reuses Ludwig's results from an earlier run of the same cases (a
shortcut while working on the built-in engine; the figures to report come from a run without
it).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality_cases import CASES, SETS, SPLIT, Case

FIXED_BATCH = 32
GOAL = 0.01


def score(case: Case, truth: pd.Series, predictions: pd.DataFrame) -> float:
    """Accuracy (binary, category) or R² (number) of one model's predictions on the test rows."""
    predicted = predictions[f"{case.target}_predictions"].reset_index(drop=True)
    actual = truth.reset_index(drop=True)
    if case.kind == "number":
        pred = predicted.astype(float).to_numpy()
        true = actual.astype(float).to_numpy()
        return float(1.0 - np.sum((true - pred) ** 2) / np.sum((true - true.mean()) ** 2))
    if case.kind == "binary":
        return float(np.mean(_as_bool(predicted) == _as_bool(actual)))
    return float(np.mean(predicted.astype(str).to_numpy() == actual.astype(str).to_numpy()))


def _as_bool(values: pd.Series) -> np.ndarray:
    truthy = {"true", "1", "yes", "1.0"}
    return np.array([str(v).strip().lower() in truthy for v in values])


def train_one(
    engine: str, case: Case, frame: pd.DataFrame, seed: int, batch: str
) -> dict[str, Any]:
    """Train ``case`` with ``engine``; returns its test score, batch size, epochs and seconds."""
    from ludwig_nb.core import events as ev
    from ludwig_nb.runs import train

    config = case.config()
    trainer = config["trainer"]
    if batch == "fixed":
        trainer.update(batch_size=FIXED_BATCH, eval_batch_size=256)
    else:
        trainer.update(batch_size="auto", eval_batch_size="auto")
    test = frame[frame[SPLIT] == 2]
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        run = train(
            config,
            frame,
            name=f"{case.name}-{engine}",
            engine=engine,
            random_seed=seed,
            results_dir=Path(tmp) / "runs",
            registry_dir=Path(tmp) / "registry",
            threads=1,
            wait=True,
        )
        seconds = time.perf_counter() - began
        if run.status != "completed" or run.model is None:
            raise RuntimeError(f"{case.name} on {engine}: {run.status}: {run.state.error}")
        predictions = run.model.predict(test.drop(columns=[case.target]))
        events = list(run.events)
        warned = list(run.state.warnings)
    started = next(e for e in events if isinstance(e, ev.RunStarted))
    evaluations = sum(isinstance(e, ev.EvaluationFinished) for e in events)
    return {
        "score": score(case, test[case.target], predictions),
        "batch_size": started.schedule.batch_size,
        "evaluations": evaluations,
        "seconds": seconds,
        "warnings": warned,
    }


def _describe(result: dict[str, Any]) -> str:
    warned = len(result.get("warnings") or [])  # Ludwig results cached before did not count
    return (
        f"{result['score']:.4f} (batch {result['batch_size']}, "
        f"{result['evaluations']} evals, {result['seconds']:.0f} s"
        + (f", {warned} warnings)" if warned else ")")
    )


def _load(path: str | None) -> dict[str, Any]:
    if path and Path(path).is_file():
        loaded: dict[str, Any] = json.loads(Path(path).read_text())
        return loaded
    return {}


def run_cases(
    names: list[str], batches: list[str], seeds: list[int], cache: str | None
) -> list[dict[str, Any]]:
    """Every (case, batch mode, seed) with both engines; prints a line per pair."""
    cached = _load(cache)
    rows = []
    for name in names:
        case = CASES[name]
        frame = case.frame()
        for batch in batches:
            for seed in seeds:
                key = f"{name}|{batch}|{seed}"
                ludwig = cached.get(key) or train_one("ludwig", case, frame, seed, batch)
                cached[key] = ludwig
                ours = train_one("builtin", case, frame, seed, batch)
                row = {
                    "case": name,
                    "kind": case.kind,
                    "batch": batch,
                    "seed": seed,
                    "ours": ours,
                    "ludwig": ludwig,
                }
                rows.append(row)
                print(
                    f"{name:14} {case.kind:8} {batch:5} seed {seed:<3} "
                    f"ours {_describe(ours)}  ludwig {_describe(ludwig)}",
                    flush=True,
                )
                if cache:
                    Path(cache).write_text(json.dumps(cached, indent=1))
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per batch mode and case: the mean scores; returns ``{batch: (within goal, cases)}``."""
    totals: dict[str, tuple[int, int]] = {}
    for batch in sorted({r["batch"] for r in rows}):
        print(f"\n{batch} batch size: mean over seeds (ours - ludwig; goal: >= -{GOAL})")
        met = count = 0
        for name in dict.fromkeys(r["case"] for r in rows):
            mine = [r for r in rows if r["case"] == name and r["batch"] == batch]
            if not mine:
                continue
            ours = float(np.mean([r["ours"]["score"] for r in mine]))
            theirs = float(np.mean([r["ludwig"]["score"] for r in mine]))
            ok = ours >= theirs - GOAL
            met, count = met + ok, count + 1
            metric = "R2" if mine[0]["kind"] == "number" else "accuracy"
            print(
                f"  {name:14} {metric:8} ours {ours:.4f}  ludwig {theirs:.4f}  "
                f"diff {ours - theirs:+.4f}  {'ok' if ok else 'BEHIND'}"
            )
        totals[batch] = (met, count)
        print(f"  within {GOAL} of Ludwig or better: {met} of {count} cases")
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=["dev", "holdout", "all"], default="dev")
    parser.add_argument("--cases", help="comma-separated case names (overrides --set)")
    parser.add_argument("--batch", choices=["fixed", "auto", "both"], default="both")
    parser.add_argument("--seeds", default="42,7")
    parser.add_argument("--ludwig-cache", help="JSON file of Ludwig's results to reuse and extend")
    args = parser.parse_args()
    names = (
        args.cases.split(",")
        if args.cases
        else (list(CASES) if args.set == "all" else SETS[args.set])
    )
    batches = ["fixed", "auto"] if args.batch == "both" else [args.batch]
    seeds = [int(s) for s in args.seeds.split(",")]
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    start_load = Path("/proc/loadavg").read_text().split()[:3]
    began = time.perf_counter()
    print(f"cases: {', '.join(names)}; fixed batch {FIXED_BATCH}; seeds {seeds}")
    print(f"load average {' '.join(start_load)}")
    rows = run_cases(names, batches, seeds, args.ludwig_cache)
    summarize(rows)
    end_load = Path("/proc/loadavg").read_text().split()[:3]
    minutes = (time.perf_counter() - began) / 60
    loads = f"at start {' '.join(start_load)}, at end {' '.join(end_load)}"
    print(f"\nload average {loads}; {minutes:.0f} min")


if __name__ == "__main__":
    main()
