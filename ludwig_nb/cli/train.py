"""``ludwig-nb train``: train a config (or a bundled demo) and follow it on the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    """Train; progress on stderr, the end report on stdout.

    With ``--json`` stdout holds the best metrics as one JSON document (so it can be piped to
    a file or ``jq``), and the end report goes to stderr with the progress.
    """
    from ludwig_nb.runs import train
    from ludwig_nb.ui.terminal import Follower, final_report

    config, dataset, name = _train_inputs(args)
    if getattr(args, "deadline", None):
        _set_deadline(args.deadline)
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
    print(final_report(state, str(run.directory)), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(state.best_metrics or {}, indent=1, default=float))
    if run.error is not None:
        print(f"error: {state.error}", file=sys.stderr)
        return 1
    return 0


def _set_deadline(text: str) -> None:
    """``--deadline``: this process's runs must be done by then (a duration counts from now)."""
    import time

    from ludwig_nb.runs.deadline_sources import set_kernel_deadline

    try:
        set_kernel_deadline(text, time.time())
    except ValueError as exc:
        raise ValueError(f"--deadline {text}: {str(exc).split(': ', 1)[-1]}") from None


def _wait(run: Run) -> None:
    """Wait for the run; Ctrl-C stops it gracefully (a second Ctrl-C gives up)."""
    try:
        run.wait()
    except KeyboardInterrupt:
        run.stop("keyboard interrupt")
        run.wait()
