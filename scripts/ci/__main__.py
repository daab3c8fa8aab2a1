"""Run the CI stages (scripts/ci/stages.py) and end with their table.

    python3 -m scripts.ci                      # every stage (what scripts/test.sh runs)
    python3 -m scripts.ci --setup              # setup.sh first (what .ci/run runs)
    python3 -m scripts.ci --only ruff,mypy     # some stages (--skip: all but some)
    python3 -m scripts.ci --list               # the stages, in order

The side venvs the chosen stages need start building in the background at once. The exit
status is the number of stages that failed (0: all passed); with ``--fail-fast`` (or
``LUDWIG_NB_CI_FAIL_FAST=1``) the run stops at the first failure with that stage's code.
``LUDWIG_NB_CI_PARALLEL=0`` (or ``--serial``) runs the background stages in the foreground.
Logs: ``LUDWIG_NB_CI_LOGS`` (default ``artifacts/ci``, emptied first); the project's venv:
``VENV`` (default ``.venv``). Standard library only: .ci/run starts it before the venv exists.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from scripts.ci import envs
from scripts.ci.report import summary
from scripts.ci.runner import Runner, Stage, Step, expand, names_of, select, stage_environment
from scripts.ci.stages import SETUP, STAGES

ROOT = Path(__file__).resolve().parents[2]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scripts/test.sh", description=__doc__.split("\n")[0])
    parser.add_argument("--setup", action="store_true", help="run scripts/setup.sh first")
    parser.add_argument("--only", default="", help="comma-separated stages to run")
    parser.add_argument("--skip", default="", help="comma-separated stages to leave out")
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        default=os.environ.get("LUDWIG_NB_CI_FAIL_FAST") == "1",
        help="stop at the first failure (LUDWIG_NB_CI_FAIL_FAST=1)",
    )
    parser.add_argument(
        "--serial",
        action="store_true",
        default=os.environ.get("LUDWIG_NB_CI_PARALLEL", "1") != "1",
        help="no stage in the background (LUDWIG_NB_CI_PARALLEL=0)",
    )
    return parser


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _raise_on_termination(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # the runner's finally: ends what is still running


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _path(variable: str, default: Path) -> Path:
    value = os.environ.get(variable)
    return default if not value else (ROOT / value if not os.path.isabs(value) else Path(value))


def main(argv: Sequence[str]) -> int:
    """Run the chosen stages; returns the exit status."""
    args = _parser().parse_args(argv)
    chosen: list[Step] = [*(SETUP if args.setup else ()), *STAGES]
    try:
        chosen = select(chosen, _names(args.only), _names(args.skip))
    except ValueError as exc:
        print(f"scripts/test.sh: {exc}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(names_of(chosen)))
        return 0
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_on_termination)
    return _run(chosen, fail_fast=args.fail_fast, parallel=not args.serial)


def _run(chosen: list[Step], *, fail_fast: bool, parallel: bool) -> int:
    """Start the side venvs' builds, run the stages, print the table; the exit status."""
    logs = _path("LUDWIG_NB_CI_LOGS", ROOT / "artifacts" / "ci")
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    env = stage_environment(ROOT, _path("VENV", ROOT / ".venv"))
    plan = expand(chosen, parallel=parallel, envs=(sys.executable, "-m", "scripts.ci.envs", "wait"))
    needed = sorted({s.env_build for s in chosen if isinstance(s, Stage) and s.env_build})
    print(f"== checks: load average {_load()} on {os.cpu_count()} cores", flush=True)
    t0, builds = time.monotonic(), envs.from_environment()
    runner = Runner(ROOT, logs, env, out=sys.stdout.buffer, fail_fast=fail_fast)
    try:
        builds.start(needed)
        stopped = runner.run(plan)
    finally:
        builds.stop()
    built = [row for row in builds.summary() if row[0] in needed]
    lines = summary(runner.results, built, logs, seconds=time.monotonic() - t0, load=_load())
    print("\n".join(lines), flush=True)
    failed = sum(r.rc != 0 for r in runner.results)
    return stopped if stopped is not None else min(failed, 255)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # (what was running has been ended)
        sys.exit(130)
