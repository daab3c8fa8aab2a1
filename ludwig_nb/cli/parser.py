"""The ``ludwig-nb`` argument parser: one sub-command per command, one builder per group."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["build_parser", "demo_datasets"]

#: ``argparse``'s sub-parsers action (its type is private)
Commands = Any


def demo_datasets() -> dict[str, str]:
    """The bundled demos: name -> what it is."""
    from ludwig_nb.data.demo import DEMO_DATASETS

    return DEMO_DATASETS


def build_parser() -> argparse.ArgumentParser:
    """``ludwig-nb``'s parser: train, compare, hyperopt, kernel, evaluate, predict."""
    demos = demo_datasets()
    demo_list = "; ".join(f"{name}: {text}" for name, text in demos.items())
    parser = argparse.ArgumentParser(
        prog="ludwig-nb",
        description="``ludwig-nb``: the same configs, headless.",
        epilog=f"bundled demos (--demo NAME, or --dataset demo:NAME): {demo_list}",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    dataset_help = f"CSV, TSV, Parquet, JSON or JSONL file, or demo:NAME ({', '.join(demos)})"
    _train(sub, dataset_help, demos, demo_list)
    _compare(sub)
    _hyperopt(sub)
    _kernel(sub)
    _model(sub, dataset_help)
    return parser


def _engine_option(command: argparse.ArgumentParser, help_text: str) -> None:
    from ludwig_nb.engines.registry import ENGINE_NAMES

    command.add_argument("--engine", default="auto", choices=ENGINE_NAMES, help=help_text)


def _train(sub: Commands, dataset_help: str, demos: dict[str, str], demo_list: str) -> None:
    train = sub.add_parser("train", help="train a model from a Ludwig config")
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
    _engine_option(
        train,
        "auto (built-in when it can run the config, else Ludwig; Ray Train for "
        "backend: {type: ray}), builtin, ludwig or ray",
    )
    train.add_argument(
        "--deadline",
        help="when the run must be done: 2h, 90min, 18:30 or 2026-08-12T18:30 (the config's "
        "gpu_watch.deadline wins); a checkpoint is saved before it when it will not be",
    )
    train.add_argument("--no-progress", action="store_true", help="no progress output")
    train.add_argument("--json", action="store_true", help="print the best metrics as JSON")
    train.add_argument(
        "--profile-steps", type=int, default=0, help="torch.profiler capture of N steps"
    )


def _compare(sub: Commands) -> None:
    comp = sub.add_parser("compare", help="compare runs (ludwig_nb or Ludwig output dirs)")
    comp.add_argument("runs", nargs="+", help="run directories; the first is the base")
    comp.add_argument("--json", action="store_true", help="machine-readable output")
    comp.add_argument("--all-config", action="store_true", help="every config path, not the diff")


def _hyperopt(sub: Commands) -> None:
    search = sub.add_parser("hyperopt", help="search a config's hyperopt: section")
    search.add_argument("--config", "-c", required=True, help="YAML config with hyperopt:")
    search.add_argument("--dataset", "-d", required=True, help="CSV, TSV, Parquet, JSON(L)")
    search.add_argument("--output-directory", "-o", default="results", help="results root")
    search.add_argument("--name", default="search", help="search name (same name: resume)")
    search.add_argument("--device", help='"cpu", "cuda", "cuda:1"')
    search.add_argument("--seed", type=int, help="training seed of every trial (default 42)")
    _engine_option(
        search, "what trains the trials, as for train (executor type ray: Ray Tune's trials)"
    )


def _kernel(sub: Commands) -> None:
    from ludwig_nb.kernelspec import DISPLAY_NAME, KERNEL_NAME

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


def _model(sub: Commands, dataset_help: str) -> None:
    for name, text in (("evaluate", "evaluate a saved model"), ("predict", "predict")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--model", "-m", required=True, help="model/ folder or run directory")
        cmd.add_argument("--dataset", "-d", required=True, help=dataset_help)
        if name == "predict":
            cmd.add_argument("--output", help="write predictions here (CSV); default: stdout")
        else:
            cmd.add_argument("--json", action="store_true", help="print the metrics as JSON")
