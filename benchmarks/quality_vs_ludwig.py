"""Quality against real Ludwig 0.11: the same config, data and split, both engines, one scorer.

Each case of ``quality_cases.py`` (real datasets shipped in pip packages) trains with the
built-in engine and with Ludwig (``engine: ludwig``), side by side in one process, at a fixed
batch size and with ``batch_size: auto``, for several seeds. Both models predict the same test
rows and one scorer scores the predictions: accuracy for binary and category outputs, R² for
number outputs. A case counts as "at Ludwig's quality" when the built-in engine's mean over the
seeds is within 0.01 of Ludwig's or better. Run it with the Ludwig venv's python (it has both):

    PYTHONPATH=$PWD $(bash scripts/setup/ludwig_env.sh --path)/bin/python \
        benchmarks/quality_vs_ludwig.py [--set dev|holdout|all] [--cases a,b] \
        [--batch fixed|auto|both] [--seeds N | --seed-list 42,7] [--results FILE]

The same seed gives both engines the same initial weights (the built-in engine draws them as
Ludwig does, shape probes included; not yet for torchvision's families and the legacy ViT) and
the same batches in the same order, so the seeds are paired. It prints one line per run, then
per case and batch mode each engine's mean ± standard deviation over the seeds, the mean of the
per-seed differences (ours - Ludwig) with its 95 % paired t interval, and a verdict: "ok" when
the mean difference is within 0.01 or better, "BEHIND" when the whole interval lies below -0.01
(behind beyond the noise of the seeds), "behind?" otherwise (behind on the mean, but within the
noise). Then the counts, with the load average at the start and the end. What still differs
between the engines from one seed is their preprocessing (the built-in engine fits it on the
training rows, Ludwig on every split) and the order of floating-point sums; on the small cases
that is enough for early stopping to end a run at another epoch, so ten seeds or more
(``--seeds 10``) are needed to tell a gap from noise.
``--ludwig-cache FILE`` reuses Ludwig's results from an earlier run of the same cases (Ludwig's
side does not change while the built-in engine does; a figure that used it says so).

``--start ludwig`` copies Ludwig's initial weights into the built-in model instead (vocabulary
rows reordered to ours), for the encoders whose draws are not in step, or to check that the
draws are: with the same start, only the engines' training and preprocessing differ.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ludwig_weights import copy_weights
from quality_cases import CASES, SETS, SPLIT, Case

FIXED_BATCH = 32
GOAL = 0.01
#: ``--seeds N`` runs the first N of these: the two of earlier figures, then 1, 2, 3, ...
SEED_ORDER = (42, 7, *(seed for seed in range(1, 1000) if seed not in (7, 42)))


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


def case_config(case: Case, batch: str) -> dict[str, Any]:
    """The case's config at a fixed batch size or with ``auto``."""
    config = case.config()
    trainer = config["trainer"]
    if batch == "fixed":
        trainer.update(batch_size=FIXED_BATCH, eval_batch_size=256)
    else:
        trainer.update(batch_size="auto", eval_batch_size="auto")
    return config


@contextlib.contextmanager
def ludwigs_start(config: dict[str, Any], frame: pd.DataFrame, seed: int) -> Iterator[list[str]]:
    """While open, the built-in engine's model starts from Ludwig's initial weights for ``seed``.

    Ludwig builds its model after preprocessing, from the config filled in with the data's
    metadata, with ``random_seed``; that model is rebuilt here and copied into ours as ours is
    built (vocabulary rows reordered to ours). Yields a list that gets the reason when the two
    cannot be matched (a category seen only outside the training rows widens Ludwig's
    embedding), in which case the run fails.
    """
    from ludwig.api import LudwigModel
    from ludwig.features.feature_registries import update_config_with_metadata

    from ludwig_nb.config import load_config
    from ludwig_nb.engines.builtin import setup

    ludwig = LudwigModel(copy.deepcopy(config), backend="local", logging_level=logging.ERROR)
    processed = ludwig.preprocess(dataset=frame, skip_save_processed_input=True)
    ludwig_meta = processed.training_set_metadata
    update_config_with_metadata(ludwig.config_obj, ludwig_meta)
    theirs = LudwigModel.create_model(ludwig.config_obj, random_seed=seed)
    rendered = load_config(copy.deepcopy(config)).to_dict()
    build = setup._build_module

    refused: list[str] = []

    def from_ludwigs(cfg: dict[str, Any], metadata: dict[str, Any], seed_: int) -> Any:
        module = build(cfg, metadata, seed_)
        try:
            copy_weights(rendered, metadata, ludwig_meta, theirs, module)
        except ValueError as err:
            refused.append(str(err))
            raise
        return module

    setup._build_module = from_ludwigs  # type: ignore[assignment]
    try:
        yield refused
    finally:
        setup._build_module = build


def train_one(
    engine: str, case: Case, frame: pd.DataFrame, seed: int, batch: str, start: str = "own"
) -> dict[str, Any]:
    """Train ``case`` with ``engine``; returns its test score, batch size, epochs and seconds.

    ``start="ludwig"`` starts the built-in engine from Ludwig's initial weights for ``seed``;
    where they cannot be copied, returns ``{"refused": why}``.
    """
    from ludwig_nb.core import events as ev
    from ludwig_nb.runs import train

    config = case_config(case, batch)
    test = frame[frame[SPLIT] == 2]
    starting: contextlib.AbstractContextManager[list[str]] = (
        ludwigs_start(config, frame, seed)
        if engine == "builtin" and start == "ludwig"
        else contextlib.nullcontext([])
    )
    with tempfile.TemporaryDirectory() as tmp, starting as refused:
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
        if refused:
            return {"refused": refused[0]}
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
    names: list[str],
    batches: list[str],
    seeds: list[int],
    cache: str | None,
    start: str = "own",
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
                ours = train_one("builtin", case, frame, seed, batch, start)
                if "refused" in ours:
                    print(f"{name:14} seed {seed}: not from Ludwig's start: {ours['refused']}")
                    continue
                row = {
                    "case": name,
                    "kind": case.kind,
                    "batch": batch,
                    "start": start,
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


def paired_difference(ours: list[float], theirs: list[float]) -> tuple[float, float, float]:
    """Mean of the per-seed differences ``ours[i] - theirs[i]`` and its 95 % t interval.

    With fewer than two seeds, or the same difference on every seed, the interval is the point.
    """
    diffs = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    diff = float(diffs.mean())
    if len(diffs) < 2 or np.std(diffs) == 0:
        return diff, diff, diff
    from scipy import stats

    low, high = stats.ttest_1samp(diffs, 0.0).confidence_interval(0.95)
    return diff, float(low), float(high)


def verdict(diff: float, high: float) -> str:
    """ "ok" within the goal on the mean; "BEHIND" when the whole interval is below it."""
    if diff >= -GOAL:
        return "ok"
    return "BEHIND" if high < -GOAL else "behind?"


def summarize(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per batch mode and case: mean ± std, the difference and its interval.

    Returns ``{batch: (cases within the goal on the mean, cases)}``.
    """
    totals: dict[str, tuple[int, int]] = {}
    for batch in sorted({r["batch"] for r in rows}):
        copied = any(r.get("start") == "ludwig" for r in rows)
        print(
            f"\n{batch} batch size: mean ± std over seeds; ours - ludwig, paired by seed "
            + ("[95 % interval; ours started from Ludwig's weights]" if copied else "[95 %]")
        )
        verdicts = []
        for name in dict.fromkeys(r["case"] for r in rows):
            mine = [r for r in rows if r["case"] == name and r["batch"] == batch]
            if mine:
                verdicts.append(_case_line(name, mine))
        met = verdicts.count("ok")
        totals[batch] = (met, len(verdicts))
        print(
            f"  within {GOAL} of Ludwig or better: {met} of {len(verdicts)} cases; "
            f"behind beyond noise: {verdicts.count('BEHIND')}"
        )
    return totals


def _spread(values: list[float]) -> str:
    """``mean±std`` (the sample standard deviation; 0 for one value)."""
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return f"{np.mean(values):.4f}±{std:.4f}"


def _case_line(name: str, rows: list[dict[str, Any]]) -> str:
    ours = [r["ours"]["score"] for r in rows]
    theirs = [r["ludwig"]["score"] for r in rows]
    diff, low, high = paired_difference(ours, theirs)
    said = verdict(diff, high)
    metric = "R2" if rows[0]["kind"] == "number" else "accuracy"
    print(
        f"  {name:14} {metric:8} ours {_spread(ours)}  ludwig {_spread(theirs)}  "
        f"diff {diff:+.4f} [{low:+.4f}, {high:+.4f}]  n={len(rows)}  {said}"
    )
    return said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=["dev", "holdout", "all"], default="dev")
    parser.add_argument("--cases", help="comma-separated case names (overrides --set)")
    parser.add_argument("--batch", choices=["fixed", "auto", "both"], default="both")
    how_many = parser.add_mutually_exclusive_group()
    how_many.add_argument("--seeds", type=int, default=2, help="how many seeds (42, 7, 1, 2, ...)")
    how_many.add_argument("--seed-list", help="comma-separated seeds (instead of --seeds)")
    parser.add_argument("--results", help="JSON file to write every run's result to")
    parser.add_argument("--ludwig-cache", help="JSON file of Ludwig's results to reuse and extend")
    parser.add_argument(
        "--start",
        choices=["own", "ludwig"],
        default="own",
        help="the built-in engine's initial weights: its own draw, or Ludwig's for the seed",
    )
    args = parser.parse_args()
    names = (
        args.cases.split(",")
        if args.cases
        else (list(CASES) if args.set == "all" else SETS[args.set])
    )
    batches = ["fixed", "auto"] if args.batch == "both" else [args.batch]
    seeds = (
        [int(s) for s in args.seed_list.split(",")]
        if args.seed_list
        else list(SEED_ORDER[: args.seeds])
    )
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    start_load = Path("/proc/loadavg").read_text().split()[:3]
    began = time.perf_counter()
    start = "its own weights" if args.start == "own" else "Ludwig's weights"
    print(f"cases: {', '.join(names)}; fixed batch {FIXED_BATCH}; seeds {seeds}; ours: {start}")
    print(f"load average {' '.join(start_load)}")
    rows = run_cases(names, batches, seeds, args.ludwig_cache, args.start)
    summarize(rows)
    if args.results:
        Path(args.results).write_text(json.dumps(rows, indent=1))
    end_load = Path("/proc/loadavg").read_text().split()[:3]
    minutes = (time.perf_counter() - began) / 60
    loads = f"at start {' '.join(start_load)}, at end {' '.join(end_load)}"
    print(f"\nload average {loads}; {minutes:.0f} min")


if __name__ == "__main__":
    main()
