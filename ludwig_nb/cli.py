"""``ludwig-nb``: the same configs, headless.

    ludwig-nb train --config c.yaml --dataset d.csv [--output-directory DIR]
    ludwig-nb train --demo churn
    ludwig-nb evaluate --model DIR --dataset d.csv
    ludwig-nb predict --model DIR --dataset d.csv [--output predictions.csv]
    ludwig-nb hyperopt --config c.yaml --dataset d.csv [--name NAME] (config with hyperopt:)

Config and data mistakes print one located message and exit with status 2; a failed
run exits with 1. Ctrl-C stops the run gracefully (its model and best checkpoint stay).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ludwig-nb", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a model from a Ludwig config")
    train.add_argument("--config", "-c", help="YAML config file")
    train.add_argument("--dataset", "-d", help="CSV, TSV, Parquet, JSON or JSONL file")
    train.add_argument("--demo", help="a bundled demo (config + dataset): churn, housing, reviews")
    train.add_argument("--output-directory", "-o", default="results", help="results root")
    train.add_argument("--name", help="run name")
    train.add_argument("--device", help='"cpu", "cuda", "cuda:1"')
    train.add_argument("--resume-from", help="run directory of a stopped or crashed run")
    train.add_argument("--seed", type=int, help="random seed (default 42, as in Ludwig)")
    train.add_argument("--threads", type=int, help="CPU threads for training (default: cores-1)")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    search = sub.add_parser("hyperopt", help="search a config's hyperopt: section")
    search.add_argument("--config", "-c", required=True, help="YAML config with hyperopt:")
    search.add_argument("--dataset", "-d", required=True, help="CSV, TSV, Parquet, JSON(L)")
    search.add_argument("--output-directory", "-o", default="results", help="results root")
    search.add_argument("--name", default="search", help="search name (same name: resume)")
    search.add_argument("--device", help='"cpu", "cuda", "cuda:1"')
    search.add_argument("--seed", type=int, help="training seed of every trial (default 42)")
    for name, text in (("evaluate", "evaluate a saved model"), ("predict", "predict")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--model", "-m", required=True, help="model/ folder or run directory")
        cmd.add_argument("--dataset", "-d", required=True)
        if name == "predict":
            cmd.add_argument("--output", help="write predictions here (CSV); default: stdout")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ludwig_nb.config import ConfigError
    from ludwig_nb.data import DataError

    try:
        if args.command == "train":
            return _train(args)
        if args.command == "hyperopt":
            return _hyperopt(args)
        return _evaluate(args) if args.command == "evaluate" else _predict(args)
    except (ConfigError, DataError, FileNotFoundError) as exc:
        print(f"ludwig-nb: {exc}", file=sys.stderr)
        return 2


def _hyperopt(args: argparse.Namespace) -> int:
    """Run the search; one line per finished trial, the best at the end. Ctrl-C stops it
    gracefully (re-running the same command resumes it)."""
    from ludwig_nb.runs import hyperopt

    text = Path(args.config).read_text(encoding="utf-8")
    search = hyperopt(
        text,
        args.dataset,
        name=args.name,
        results_dir=args.output_directory,
        device=args.device,
        random_seed=args.seed,
    )
    told: set[int] = set()
    try:
        while not search.wait(0.5).is_done:
            told |= _tell_trials(search, told)
    except KeyboardInterrupt:
        print("ludwig-nb: stopping the search (run the same command again to resume)")
        search.stop("interrupt")
        search.wait()
    _tell_trials(search, told)
    best = search.best
    if search.error is not None:
        print(f"ludwig-nb: the search failed: {search.error}", file=sys.stderr)
        return 1
    if best is not None:
        print(f"best: trial {best['trial']} {search.section['metric']}={best['metric']:.6g}")
    print(f"search directory: {search.directory}")
    return 0


def _tell_trials(search: Any, told: set[int]) -> set[int]:
    new = set()
    for record in search.records():
        if record.number in told or record.state not in (
            "completed",
            "pruned",
            "failed",
            "stopped",
        ):
            continue
        params = ", ".join(f"{k}={v}" for k, v in record.params.items())
        metric = "" if record.metric is None else f" {record.metric:.6g}"
        print(f"trial {record.number}: {record.state}{metric} ({params})", flush=True)
        new.add(record.number)
    return new


def _train_inputs(args: argparse.Namespace) -> tuple[Any, Any, str]:
    if args.demo:
        from ludwig_nb.data import demo_config, demo_dataset

        text = demo_config(args.demo).read_text(encoding="utf-8")
        return text, demo_dataset(args.demo), args.name or args.demo
    if not args.config or not args.dataset:
        raise FileNotFoundError("train needs --config and --dataset (or --demo NAME)")
    config_path = Path(args.config)
    if not config_path.is_file():
        raise FileNotFoundError(f"config file not found: {args.config}")
    text = config_path.read_text(encoding="utf-8")
    return text, args.dataset, args.name or config_path.stem


def _train(args: argparse.Namespace) -> int:
    from ludwig_nb.runs import train

    config, dataset, name = _train_inputs(args)
    run = train(
        config,
        dataset,
        name=name,
        results_dir=args.output_directory,
        device=args.device,
        resume_from=args.resume_from,
        random_seed=args.seed,
        threads=args.threads,
    )
    _follow(run, show=not args.no_progress)
    state = run.state
    print(f"{state.status}: {state.step}/{state.total_steps} steps -> {run.directory}")
    if state.best_metrics:
        print(json.dumps(state.best_metrics, indent=1, default=float))
    if run.error is not None:
        print(f"error: {state.error}", file=sys.stderr)
        return 1
    return 0


def _follow(run: Any, show: bool) -> None:
    """A terminal progress bar fed by the run's events, with our ETA (not tqdm's)."""
    from tqdm import tqdm

    from ludwig_nb.core.eta_format import format_estimate

    bar = tqdm(
        total=0,
        disable=not show,
        unit="step",
        dynamic_ncols=True,
        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} {postfix}",
    )
    subscription = run.subscribe()
    interrupted = False
    while True:
        try:
            done = run.wait(0.25).is_done
            state = run.state
            bar.total = max(state.total_steps, state.step)
            bar.n = state.step
            loss = f"loss={state.last_loss:.4g} " if state.last_loss is not None else ""
            bar.set_postfix_str(f"{loss}{state.status} · {format_estimate(run.eta(), time.time())}")
            subscription.drain()
            if done:
                break
        except KeyboardInterrupt:
            if interrupted:
                raise
            interrupted = True
            run.stop("keyboard interrupt")
    bar.close()


def _evaluate(args: argparse.Namespace) -> int:
    from ludwig_nb.runs import load_model

    metrics = load_model(args.model).evaluate(args.dataset)
    print(json.dumps(metrics, indent=1, default=float))
    return 0


def _predict(args: argparse.Namespace) -> int:
    from ludwig_nb.runs import load_model

    predictions = load_model(args.model).predict(args.dataset)
    if args.output:
        predictions.to_csv(args.output, index=False)
        print(f"{len(predictions)} predictions -> {args.output}")
    else:
        predictions.to_csv(sys.stdout, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
