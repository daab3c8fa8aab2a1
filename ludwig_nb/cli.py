"""``ludwig-nb``: the same configs, headless.

    ludwig-nb train --config c.yaml --dataset d.csv [--output-directory DIR]
    ludwig-nb train --demo churn [--engine auto|builtin|ludwig]
    ludwig-nb evaluate --model DIR --dataset d.csv
    ludwig-nb predict --model DIR --dataset d.csv [--output predictions.csv]
    ludwig-nb hyperopt --config c.yaml --dataset d.csv [--name NAME] (config with hyperopt:)
    ludwig-nb kernel install [--user | --sys-prefix | --prefix DIR] [--name ludwig_nb]

Config and data mistakes print one located message and exit with status 2; a failed
run exits with 1. Ctrl-C stops the run gracefully (its model and best checkpoint stay).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:  # the CLI imports the heavy layers lazily, inside its commands
    from tqdm import tqdm

    from ludwig_nb.core.state import RunState
    from ludwig_nb.runs import Run, Search

__all__ = ["Follower", "main", "progress_line"]


def _demos() -> dict[str, str]:
    from ludwig_nb.data.demo import DEMO_DATASETS

    return DEMO_DATASETS


def _parser() -> argparse.ArgumentParser:
    from ludwig_nb.engines.registry import ENGINE_NAMES
    from ludwig_nb.kernelspec import DISPLAY_NAME, KERNEL_NAME

    demos = _demos()
    demo_list = "; ".join(f"{name}: {text}" for name, text in demos.items())
    parser = argparse.ArgumentParser(
        prog="ludwig-nb",
        description=__doc__.split("\n\n")[0],
        epilog=f"bundled demos (--demo NAME, or --dataset demo:NAME): {demo_list}",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a model from a Ludwig config")
    dataset_help = f"CSV, TSV, Parquet, JSON or JSONL file, or demo:NAME ({', '.join(demos)})"
    train.add_argument("--config", "-c", help="YAML config file")
    train.add_argument("--dataset", "-d", help=dataset_help)
    train.add_argument(
        "--demo", choices=list(demos), help=f"a bundled demo (its config and dataset): {demo_list}"
    )
    train.add_argument("--output-directory", "-o", default="results", help="results root")
    train.add_argument("--name", help="run name")
    train.add_argument("--device", help='"cpu", "cuda", "cuda:1"')
    train.add_argument("--resume-from", help="run directory of a stopped or crashed run")
    train.add_argument("--seed", type=int, help="random seed (default 42, as in Ludwig)")
    train.add_argument("--threads", type=int, help="CPU threads for training (default: cores-1)")
    train.add_argument(
        "--engine",
        default="auto",
        choices=ENGINE_NAMES,
        help="auto (built-in when it can run the config, else Ludwig; Ray Train for "
        "backend: {type: ray}), builtin, ludwig or ray",
    )
    train.add_argument("--no-progress", action="store_true", help="no progress output")
    train.add_argument(
        "--json",
        action="store_true",
        help="print the best metrics, the end-of-run warnings and the batch size as JSON",
    )
    train.add_argument(
        "--profile-steps", type=int, default=0, help="torch.profiler capture of N steps"
    )
    comp = sub.add_parser("compare", help="compare runs (ludwig_nb or Ludwig output dirs)")
    comp.add_argument("runs", nargs="+", help="run directories; the first is the base")
    comp.add_argument("--json", action="store_true", help="machine-readable output")
    comp.add_argument("--all-config", action="store_true", help="every config path, not the diff")
    search = sub.add_parser("hyperopt", help="search a config's hyperopt: section")
    search.add_argument("--config", "-c", required=True, help="YAML config with hyperopt:")
    search.add_argument("--dataset", "-d", required=True, help="CSV, TSV, Parquet, JSON(L)")
    search.add_argument("--output-directory", "-o", default="results", help="results root")
    search.add_argument("--name", default="search", help="search name (same name: resume)")
    search.add_argument("--device", help='"cpu", "cuda", "cuda:1"')
    search.add_argument("--seed", type=int, help="training seed of every trial (default 42)")
    kernel = sub.add_parser(
        "kernel",
        help="install a Jupyter kernel that loads torch and ludwig_nb as it starts",
        description="A Jupyter kernel spec for this Python that starts ludwig_nb's warm-up "
        "(torch, the engine, the dashboard's modules) as the kernel starts, so that a "
        "notebook's first run trains at once; notebooks still begin with %load_ext ludwig_nb.",
    )
    kernel.add_argument("action", choices=["install"], help="install the kernel spec")
    where = kernel.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (~/.local/share)")
    where.add_argument(
        "--sys-prefix", action="store_true", help="into this environment (the default in a venv)"
    )
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    kernel.add_argument(
        "--name",
        default=KERNEL_NAME,
        help="kernel spec name (python3 replaces the environment's default kernel)",
    )
    kernel.add_argument(
        "--display-name", default=DISPLAY_NAME, help="the name Jupyter's kernel picker shows"
    )
    for name, text in (("evaluate", "evaluate a saved model"), ("predict", "predict")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--model", "-m", required=True, help="model/ folder or run directory")
        cmd.add_argument("--dataset", "-d", required=True, help=dataset_help)
        if name == "predict":
            cmd.add_argument("--output", help="write predictions here (CSV); default: stdout")
        else:
            cmd.add_argument("--json", action="store_true", help="print the metrics as JSON")
    return parser


def _kernel(args: argparse.Namespace) -> int:
    """``ludwig-nb kernel install``: the kernel spec, into the place the flags name."""
    from ludwig_nb.kernelspec import install

    in_venv = sys.prefix != sys.base_prefix
    prefix = args.prefix or (sys.prefix if args.sys_prefix or (in_venv and not args.user) else None)
    user = prefix is None
    try:
        where = install(user=user, prefix=prefix, name=args.name, display_name=args.display_name)
    except ImportError as exc:  # ipykernel is the kernel itself, not one of our requirements
        print(
            f"ludwig-nb: the kernel runs on ipykernel, which did not import ({exc}); "
            "pip install ipykernel, then run this again",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # not writable, or not a directory
        place = "the user's Jupyter directory" if user else f"{prefix}/share/jupyter/kernels"
        print(
            f"ludwig-nb: cannot write the kernel spec into {place} ({exc.strerror}); "
            "install it with --user, or --prefix DIR",
            file=sys.stderr,
        )
        return 2
    print(f"installed kernel {args.name!r} ({args.display_name}) in {where}")
    print("pick it in Jupyter's kernel menu; notebooks still begin with %load_ext ludwig_nb")
    return 0


def _start_engine_warm_up(argv: Sequence[str]) -> None:
    """Start importing torch and the engine in the background for ``train``.

    Only on the built-in engine (``--engine`` auto or builtin): the import runs while this
    thread parses the arguments, loads the config and reads the dataset (torch is ~2 s of a
    short run's whole process; the run's thread would otherwise import it only after all of
    that). Other commands and engines start nothing.

    Args:
        argv: The arguments after the program name.
    """
    words = list(argv)
    if not words or words[0] != "train":
        return
    engine = "auto"
    for i, word in enumerate(words):
        if word == "--engine" and i + 1 < len(words):
            engine = words[i + 1]
        elif word.startswith("--engine="):
            engine = word.partition("=")[2]
    if engine not in ("auto", "builtin"):
        return
    from ludwig_nb.engines.builtin import warmup

    warmup.start()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ludwig-nb`` command line.

    Commands: ``train``, ``evaluate``, ``predict``, ``compare``, ``hyperopt``, ``kernel``.
    ``train`` on the built-in engine starts importing torch in the background at once.

    Args:
        argv: The arguments after the program name; None reads ``sys.argv``.

    Returns:
        The process exit status: 0 on success, 2 for a bad config, dataset, checkpoint, model or
        run directory (its message printed on stderr, located), else the command's own status.
    """
    _start_engine_warm_up(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    from ludwig_nb.config import ConfigError
    from ludwig_nb.data import DataError
    from ludwig_nb.engines.base import EngineUnavailable
    from ludwig_nb.runs import CheckpointError, ModelLoadError, RunDirectoryError

    try:
        if args.command == "train":
            return _train(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "hyperopt":
            return _hyperopt(args)
        if args.command == "kernel":
            return _kernel(args)
        return _evaluate(args) if args.command == "evaluate" else _predict(args)
    except (
        ConfigError,
        DataError,
        EngineUnavailable,
        FileNotFoundError,
        CheckpointError,
        ModelLoadError,
        RunDirectoryError,
        ValueError,
    ) as exc:
        print(f"ludwig-nb: {exc}", file=sys.stderr)
        return 2


def _hyperopt(args: argparse.Namespace) -> int:
    """Run the search; one line per finished trial, the best at the end.

    Ctrl-C stops it gracefully (re-running the same command resumes it).
    """
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


def _tell_trials(search: Search, told: set[int]) -> set[int]:
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
        engine=args.engine,
        profile_steps=args.profile_steps,
    )
    if args.no_progress:
        _wait(run)
    else:
        Follower(run, sys.stderr).follow()
    state = run.state
    print(_final_report(state, str(run.directory)))
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


def _compare(args: argparse.Namespace) -> int:
    from ludwig_nb.runs.compare import compare

    comparison = compare(*args.runs)
    config = comparison.config_all if args.all_config else comparison.config_diff
    if args.json:
        rows = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in comparison.rows()
        ]
        print(
            json.dumps(
                {
                    "runs": comparison.names,
                    "warnings": comparison.warnings,
                    "config": {p: list(v) for p, v in config.items()},
                    "rows": rows,
                },
                indent=1,
                default=str,
            )
        )
        return 0
    for warning in comparison.warnings:
        print(f"warning: {warning}")
    print(f"config ({len(comparison.config_diff)} change(s)):")
    for path, values in config.items():
        print(f"  {path}: " + " | ".join(str(v) for v in values))
    frame = comparison.to_frame().drop(columns=["kind"], errors="ignore")
    print(frame.to_string(float_format=lambda v: f"{v:.6g}"))
    return 0


def _final_report(state: RunState, directory: str) -> str:
    """Format the end-of-run report.

    ``completed: 2,585/2,585 steps -> DIR``, why it ended, then the best metrics beside the trivial
    baseline as a table.
    """
    from ludwig_nb.core.early_stop import end_reason
    from ludwig_nb.core.metrics_text import metrics_text_table

    lines = [f"{state.status}: {state.step:,}/{state.total_steps:,} steps -> {directory}"]
    ended = end_reason(state)
    if ended:
        lines.append(ended)
    metrics = state.best_metrics or state.latest_metrics
    table = metrics_text_table(metrics, state.baseline, state.baseline_predictors)
    if table:
        if state.best_metrics:
            at = f", step {state.best_step:,}" if state.best_step else ""
            lines.append(f"metrics (best{at}):")
        else:
            lines.append("metrics (latest evaluation):")
        lines.append(table)
    lines.extend(f"warning: {warning}" for warning in state.warnings)
    if state.batch_note:
        lines.append(state.batch_note)
    return "\n".join(lines)


def _eta_words(run: Run, state: RunState, now: float) -> str:
    """The ETA part of a progress line, from the run's one ETA.

    With early stopping the ETA is an upper bound and the likely stop is forecast.
    """
    from ludwig_nb.core.early_stop import format_forecast
    from ludwig_nb.core.eta.display import format_estimate
    from ludwig_nb.core.formatting import format_duration

    reading = run.eta_reading(now)
    estimate = reading.estimate
    text = format_estimate(estimate, now)
    if not reading.early_stopping or not state.total_steps:
        return f"ETA {text}"
    forecast = reading.forecast
    words = format_forecast(forecast, state.total_steps)
    if forecast is not None and forecast.remaining_s is not None:
        words += f", ≈ {format_duration(forecast.remaining_s)} from now"
    bound = f"ETA ≤ {format_duration(estimate.remaining_s)}" if estimate is not None else "ETA ?"
    return f"{bound} · {words}"


def progress_line(state: RunState, eta_words: str, pause_words: str = "") -> str:
    """One progress line.

    ``"training · step 1,200 / 3,000 (40 %) · epoch 2 / 5 · loss 0.2312 · ETA …"``; paused: the
    reason in words and the frozen estimate.
    """
    if state.status == "preprocessing" or (state.status == "queued" and not state.step):
        return f"{state.status} · {state.phase_detail or 'loading and preprocessing the data'}"
    if state.is_final:
        from ludwig_nb.core.early_stop import end_reason

        ended = end_reason(state) or state.error
        return " · ".join(p for p in (state.status, f"step {state.step:,}", ended) if p)
    total = f"{state.total_steps:,}" if state.total_steps else "?"
    pct = f" ({100 * state.progress:.0f} %)" if state.total_steps else ""
    parts = [pause_words or state.status, f"step {state.step:,} / {total}{pct}"]
    if state.epochs:
        parts.append(f"epoch {min(state.epoch + 1, state.epochs)} / {state.epochs}")
    if state.last_loss is not None:
        parts.append(f"loss {state.last_loss:.4g}")
    parts.append(f"estimate frozen: {eta_words}" if pause_words else eta_words)
    return " · ".join(parts)


class Follower:
    """Progress on ``stream``.

    A tqdm bar on a terminal; without one (a log file, CI) a plain line every ``interval`` seconds,
    never carriage-return frames. Ctrl-C stops the run gracefully; a second one gives up. ``clock``
    (monotonic seconds) spaces the lines, ``wall`` (wall-clock seconds) feeds the ETA.
    """

    def __init__(
        self,
        run: Run,
        stream: TextIO,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.run = run
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.clock = clock
        self.wall = wall
        self._frozen = ""  # the ETA words when the pause began
        self._last_line: float | None = None
        self.lines = 0

    def line(self) -> str:
        """The current progress line, from the run's one state and ETA."""
        from ludwig_nb.core.status_text import pause_text

        state = self.run.state
        if state.status == "paused":
            if not self._frozen:
                self._frozen = _eta_words(self.run, state, self.wall())
            return progress_line(state, self._frozen, pause_text(state))
        self._frozen = ""
        return progress_line(state, _eta_words(self.run, state, self.wall()))

    def follow(self) -> None:
        """Show progress until the run ends; Ctrl-C stops it, a second Ctrl-C gives up."""
        bar = self._bar() if self.tty else None
        interrupted = False
        while True:
            try:
                done = self.run.wait(0.25).is_done
                self.show(bar, done)
                if done:
                    break
            except KeyboardInterrupt:
                if interrupted:
                    raise
                interrupted = True
                self.run.stop("keyboard interrupt")
        if bar is not None:
            bar.close()

    def _bar(self) -> tqdm[Any]:
        from tqdm import tqdm

        return tqdm(
            total=0,
            unit="step",
            dynamic_ncols=True,
            file=self.stream,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} {postfix}",
        )

    def show(self, bar: tqdm[Any] | None, done: bool) -> None:
        """Update the bar, or print a line when ``interval`` passed (or the run ended)."""
        state = self.run.state
        if bar is not None:
            bar.total = max(state.total_steps, state.step)
            bar.n = state.step
            bar.set_postfix_str(self.line())
            return
        now = self.clock()
        if done or self._last_line is None or now - self._last_line >= self.interval:
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)
            self.lines += 1


def _evaluate(args: argparse.Namespace) -> int:
    from ludwig_nb.core.metrics_text import metrics_text_table
    from ludwig_nb.runs import load_model

    metrics = load_model(args.model).evaluate(args.dataset)
    if args.json:
        print(json.dumps(metrics, indent=1, default=float))
    else:
        print(metrics_text_table({str(args.dataset): metrics}))
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


def entry() -> NoReturn:
    """Run the ``ludwig-nb`` console script: :func:`main`, then a quick exit.

    Output is flushed and the ``atexit`` handlers run (logging, GPU power limits, samplers);
    only the interpreter's teardown of its modules is skipped, which with torch loaded took
    0.5-1.5 s of a short run's whole process and writes nothing. Exits with :func:`main`'s
    status.
    """
    code = main()
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    entry()
