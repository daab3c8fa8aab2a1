"""``ludwig-nb train``: train a config (or a bundled demo) and follow it on the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.core.state import RunState
    from ludwig_nb.runs import Run

__all__ = ["run"]


def _train_inputs(args: argparse.Namespace) -> tuple[Any, Any, str]:  # as train() takes them
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


def run(args: argparse.Namespace) -> int:
    """Train; progress on stderr, the end report (and ``--json`` metrics) on stdout."""
    from ludwig_nb.runs import train
    from ludwig_nb.ui.terminal import Follower, final_report

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
        engine=args.engine,
        profile_steps=args.profile_steps,
    )
    if args.no_progress:
        _wait(run)
    else:
        Follower(run, sys.stderr).follow()
    state = run.state
    print(final_report(state, str(run.directory)))
    if args.json:
        print(json.dumps(_train_json(state), indent=1, default=float))
    if run.error is not None:
        print(f"error: {state.error}", file=sys.stderr)
        return 1
    return 0


def _train_json(state: RunState) -> dict[str, object]:
    """``train --json``: the best metrics, the warnings and the batch size (with why)."""
    return {
        "status": state.status,
        "metrics": dict(state.best_metrics or state.latest_metrics),
        "warnings": list(state.warnings),
        "batch_size": state.batch_size,
        "batch_note": state.batch_note,
    }


def _wait(run: Run) -> None:
    """Wait for the run; Ctrl-C stops it gracefully (a second Ctrl-C gives up)."""
    try:
        run.wait()
    except KeyboardInterrupt:
        run.stop("keyboard interrupt")
        run.wait()
