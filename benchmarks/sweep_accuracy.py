"""The batch-size sweep's predicted time per epoch against the real runs, per batch size.

    python benchmarks/sweep_accuracy.py [--sizes 32,128,512] [--epochs 6] [--repeats 3]

On the bundled churn demo (tabular, binary output) with early stopping off: one
``ludwig_nb.estimate(..., vary={"trainer.batch_size": sizes})`` (one pilot per size), then a
full run per size. Time per epoch is the training proper (steps, evaluations,
checkpoints): the predicted figure leaves preprocessing and the final save out, and the
actual one is the run's profile phases (training + evaluation + checkpoint) over its epochs.
Sweep and runs repeat ``--repeats`` times, interleaved, and the medians are compared (a
shared machine's load moves single wall-clock figures by tens of percent). Prints
predicted vs actual per size, the error, and whether the sweep's fastest size was the
fastest in reality.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import yaml

import ludwig_nb
from ludwig_nb.data import demo_config, demo_dataset


def _config(epochs: int) -> str:
    config = yaml.safe_load(demo_config("churn").read_text(encoding="utf-8"))
    config["trainer"].update(epochs=epochs, early_stop=-1)
    config["gpu_watch"] = {"enabled": True}  # the profile's host samples; no GPU here
    return yaml.safe_dump(config)


def _actual_epoch_s(run: ludwig_nb.runs.Run) -> float:  # type: ignore[name-defined]
    phases = run.profile_summary["phase_s"]
    seconds = sum(phases.get(p, 0.0) for p in ("training", "evaluation", "checkpoint"))
    return seconds / max(1, run.state.epochs)


def _one_round(config: str, data: object, sizes: list[int]) -> tuple[dict, dict, object]:
    sweep = ludwig_nb.estimate(config, data, vary={"trainer.batch_size": sizes})
    actual: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for point in sweep.points:
            text = config.replace("batch_size: 64", f"batch_size: {point.value}")
            run = ludwig_nb.train(
                text,
                data,
                name=f"bs{point.value}",
                results_dir=tmp,
                registry_dir=Path(tmp) / "reg",
                wait=True,
            )
            actual[point.value] = _actual_epoch_s(run)
    predicted = {p.value: p.epoch_s for p in sweep.points}
    return predicted, actual, sweep.fastest.value if sweep.fastest else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="32,128,512")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    config, data = _config(args.epochs), demo_dataset("churn")
    predicted: dict[int, list[float]] = {s: [] for s in sizes}
    actual: dict[int, list[float]] = {s: [] for s in sizes}
    picks = []
    began = time.perf_counter()
    for _ in range(args.repeats):
        p, a, pick = _one_round(config, data, sizes)
        for size in sizes:
            predicted[size].append(p[size])
            actual[size].append(a[size])
        picks.append(pick)
    print(
        f"{args.repeats} rounds of a {len(sizes)}-value sweep + full runs: "
        f"{time.perf_counter() - began:.0f} s"
    )
    for size in sizes:
        pred, act = statistics.median(predicted[size]), statistics.median(actual[size])
        print(
            f"batch {size:>5}: predicted {pred:.3f} s/epoch, actual {act:.3f} s/epoch, "
            f"error {100 * (pred - act) / act:+.1f} % (medians of {args.repeats})"
        )
    real = min(sizes, key=lambda s: statistics.median(actual[s]))
    print(f"fastest in reality: {real}; the sweep's picks per round: {picks}")


if __name__ == "__main__":
    main()
