"""The ``ludwig-nb`` entry point: parse, start the engine's warm-up, run a command, exit."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ludwig_nb.cli import compare, hyperopt, kernel, model, train
from ludwig_nb.cli.parser import build_parser

__all__ = ["entry", "main", "start_engine_warm_up"]

#: sub-command -> what runs it (the module of its command group)
_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "train": train.run,
    "evaluate": model.evaluate,
    "predict": model.predict,
    "compare": compare.run,
    "hyperopt": hyperopt.run,
    "kernel": kernel.run,
}


def start_engine_warm_up(argv: Sequence[str]) -> None:
    """Start the engine's warm-up in the background for ``train`` (``Engine.start_warm_up``).

    The engine ``--engine`` names (auto: the default engine). The built-in engine imports
    torch then, while this thread parses the arguments, loads the config and reads the dataset
    (torch is ~2 s of a short run's whole process; the run's thread would otherwise import it
    only after all of that); the others start nothing. Other commands start nothing.

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
    from ludwig_nb.engines.registry import AUTO, ENGINES, default_engine, get_engine

    if engine == AUTO:
        default_engine().start_warm_up()
    elif engine in ENGINES:
        get_engine(engine).start_warm_up()


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
    start_engine_warm_up(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    from ludwig_nb.config import ConfigError
    from ludwig_nb.data import DataError
    from ludwig_nb.engines.base import EngineUnavailable
    from ludwig_nb.runs import CheckpointError, ModelLoadError, RunDirectoryError

    try:
        return _COMMANDS[args.command](args)
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
