"""Hyperparameter search on a real dataset: TPE vs random, and the search ETA's error.

    python benchmarks/hyperopt_search.py [--trials 12] [--seeds 3] [--epochs 12] [--demo cars]

For each search algorithm (random, TPE) and seed, runs one search of ``--trials`` trials on
the bundled demo dataset (Auto MPG by default: a regression, validation loss minimised)
through ``ludwig_nb.hyperopt`` exactly as a user would (defaults: one trial at a time, no
pruning, the built-in engine on this machine's CPU), and prints

* the best validation loss found after 1, 2, ... trials, per algorithm (mean over seeds),
  and the ratio TPE / random at each count;
* the search ETA's error at 25 / 50 / 75 % of the search: the panel's "search done ≈"
  (``Search.remaining_s``: the per-trial cost model of ``search/eta.py``) sampled at
  the moment that share of trials had finished, against the time the search really took
  from then on: |predicted - actual| / actual; beside it, at the same moments, the
  estimate before the cost model ("before": every queued trial costs the mean finished
  duration, a running trial its own ETA), so both are measured on the same trials.

Both algorithms run in the same process, one after the other, so the ratios compare like
with like on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from ludwig_nb.data import demo_config, demo_dataset
from ludwig_nb.search import hyperopt

SPACE = {
    "trainer.learning_rate": {"space": "loguniform", "lower": 0.00003, "upper": 0.3},
    "trainer.batch_size": {"space": "choice", "categories": [8, 16, 32, 64, 128]},
    "combiner.output_size": {"space": "choice", "categories": [8, 16, 32, 64, 128]},
    "combiner.num_fc_layers": {"space": "randint", "lower": 1, "upper": 5},
    "combiner.dropout": {"space": "uniform", "lower": 0.0, "upper": 0.6},
}
FRACTIONS = (0.25, 0.5, 0.75)


def _config(demo: str, algorithm: str, seed: int, trials: int, epochs: int) -> dict:
    config = yaml.safe_load(Path(demo_config(demo)).read_text())
    config["trainer"].update({"epochs": epochs, "early_stop": -1})
    config["hyperopt"] = {
        "goal": "minimize",
        "metric": "loss",
        "parameters": SPACE,
        "search_alg": {"type": algorithm, "random_state_seed": seed, "n_startup_trials": 4},
        "executor": {"num_samples": trials},
    }
    return config


def _before_remaining_s(search, now: float) -> float | None:
    """The search ETA before the cost model (wave 1): the mean finished duration per
    queued trial, divided over the slots, after the longest running trial's own ETA."""
    records = search.records()
    ended = ("completed", "pruned", "failed", "stopped")
    finished = [r.duration_s for r in records if r.state in ended and not r.search_stopped]
    typical = statistics.fmean(finished) if finished else None
    in_flight = []
    for r in records:
        if r.state in ("running", "paused") and r.started is not None:
            remaining = getattr(r.run.eta(now) if r.run else None, "remaining_s", None)
            if remaining is None and typical is None:
                return None
            in_flight.append(remaining if remaining is not None else typical - (now - r.started))
    queued = max(0, search.total - len(finished) - len(in_flight))
    if queued and typical is None:
        return None
    return max([0.0, *in_flight]) + (typical or 0.0) * queued / max(1, search.concurrency)


def _one(demo: str, algorithm: str, seed: int, trials: int, epochs: int, root: Path) -> dict:
    began = time.time()
    search = hyperopt(
        _config(demo, algorithm, seed, trials, epochs),
        str(demo_dataset(demo)),
        name=f"{algorithm}-{seed}",
        results_dir=root,
        registry_dir=root / "registry",
    )
    # (time, finished, predicted s, predicted s before the cost model)
    samples: list[tuple[float, int, float | None, float | None]] = []
    while not search.wait(0.25).is_done:
        now = time.time()
        finished = sum(1 for r in search.records() if r.state in ("completed", "pruned", "failed"))
        samples.append((now, finished, search.remaining_s(now), _before_remaining_s(search, now)))
    end = time.time()
    if search.error is not None:
        raise SystemExit(f"search {algorithm}/{seed} failed: {search.error}")
    records = sorted(search.records(), key=lambda r: r.ended or 0.0)
    best, curve = float("inf"), []
    for record in records:
        if record.metric is not None and record.state == "completed":
            best = min(best, record.metric)
        curve.append(best)
    errors, before = {}, {}
    for fraction in FRACTIONS:
        hit = next((s for s in samples if s[1] >= fraction * trials and s[2] is not None), None)
        if hit is not None:
            actual = end - hit[0]
            errors[fraction] = (hit[2] - actual) / actual if actual > 0 else 0.0
            if hit[3] is not None:
                before[fraction] = (hit[3] - actual) / actual if actual > 0 else 0.0
    return {"curve": curve, "eta_errors": errors, "eta_before": before, "wall_s": end - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--demo", default="cars")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {"random": [], "optuna": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for algorithm, runs in results.items():
                result = _one(args.demo, algorithm, seed, args.trials, args.epochs, Path(tmp))
                runs.append(result)
                print(
                    f"{algorithm:6s} seed {seed}: best {result['curve'][-1]:.4f} "
                    f"in {result['wall_s']:.0f} s",
                    flush=True,
                )
    print(f"\nbest validation loss after n trials ({args.demo}, mean of {args.seeds} seeds)")
    print(f"{'n':>3} {'random':>9} {'tpe':>9} {'tpe/random':>11}")  # optuna = TPE
    for n in range(args.trials):
        rnd = statistics.mean(r["curve"][n] for r in results["random"])
        tpe = statistics.mean(r["curve"][n] for r in results["optuna"])
        print(f"{n + 1:>3} {rnd:>9.4f} {tpe:>9.4f} {tpe / rnd:>11.3f}")
    print("\nsearch ETA error |predicted - actual| / actual (over all searches)")
    for fraction in FRACTIONS:
        for key, label in (("eta_before", "before (mean duration)"), ("eta_errors", "cost model")):
            signed = [r[key][fraction] for rs in results.values() for r in rs if fraction in r[key]]
            errors = [abs(e) for e in signed]
            if errors:
                print(
                    f"  at {fraction:.0%} of the search, {label:22s}: mean "
                    f"{statistics.mean(errors):.1%}, median {statistics.median(errors):.1%}, "
                    f"max {max(errors):.1%}, bias {statistics.mean(signed):+.1%} "
                    f"({len(errors)} searches)"
                )


if __name__ == "__main__":
    main()
