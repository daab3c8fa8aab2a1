"""Runs the CI stages: in order, each one's output shown and kept, every exit code recorded.

A :class:`Stage` is a command. It runs in the foreground (its output streamed and written to
``<logs>/<name>.log``), or, ``background=True``, from its place in the list beside the stages
after it until its :class:`Join`, where its log is shown and it is recorded like the others.
A stage that needs a side venv (``env_build``) waits for that venv's background build just
before it starts (``scripts/ci/envs.py``; the wait is a stage of its own, ``<venv>-env``,
except in the background, where the wait is part of the job). Every stage runs and keeps
its exit code; ``fail_fast`` stops at the first failure, and a ``gate`` stage (setup) stops
the run when it fails, since nothing after it could work.

Every stage runs in a process group of its own: whatever is still running when the run ends
(normally, on a failure, on Ctrl-C or SIGTERM) is ended with its group, and so are the venv
builds still going.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from scripts.ci.usage import child_cpu_s, cpu_s

__all__ = ["Join", "Result", "Runner", "Stage", "Step", "expand", "select"]

_GRACE_S = 10.0  # after SIGTERM, before SIGKILL, for a group that is being ended


@dataclasses.dataclass(frozen=True)
class Stage:
    """One check.

    Attributes:
        name: Its name in the output, the log's file name and the closing table.
        argv: The command, run from the clone's root with the project's venv first on PATH.
        env_build: The side venv (``colab``, ``ludwig``, ``ray``) whose background build it
            waits for just before it starts.
        background: Starts at its place and runs beside the stages that follow, until the
            :class:`Join` of its name (in the foreground there when the run is serial).
        runtime_dir: Gets a Jupyter runtime directory (so a run registry) of its own.
        removes: Paths, from the clone's root, removed after it, whatever its result.
        gate: A failure ends the run (what follows cannot work without it).
    """

    name: str
    argv: tuple[str, ...]
    env_build: str | None = None
    background: bool = False
    runtime_dir: bool = False
    removes: tuple[str, ...] = ()
    gate: bool = False


@dataclasses.dataclass(frozen=True)
class Join:
    """Where the background stage ``name`` is waited for, shown and recorded."""

    name: str


Step = Stage | Join


@dataclasses.dataclass(frozen=True)
class Result:
    """A finished stage: wall seconds, CPU seconds of its processes, exit code."""

    name: str
    seconds: float
    cpu_s: float
    rc: int


def select(steps: Sequence[Step], only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Step]:
    """The steps whose stage is named in ``only`` (all when empty) and not in ``skip``.

    Raises:
        ValueError: A name that is no stage's (the message lists the stages).
    """
    only, skip = set(only), set(skip)
    names = {s.name for s in steps if isinstance(s, Stage)}
    unknown = (only | skip) - names
    if unknown:
        raise ValueError(
            f"no stage {', '.join(sorted(unknown))}; the stages: {', '.join(names_of(steps))}"
        )
    kept = {n for n in names if (not only or n in only) and n not in skip}
    return [s for s in steps if s.name in kept]


def names_of(steps: Sequence[Step]) -> list[str]:
    """The stages' names, in order."""
    return [s.name for s in steps if isinstance(s, Stage)]


def expand(steps: Sequence[Step], *, parallel: bool, envs: Sequence[str]) -> list[Step]:
    """The steps as they run: each venv wait made a stage ``<venv>-env`` before its stage
    (``envs``: the command that waits, the venv's name is appended), and, when not
    ``parallel``, each background stage moved to its join, in the foreground."""
    background = {s.name: s for s in steps if isinstance(s, Stage) and s.background}
    out: list[Step] = []
    for step in steps:
        if isinstance(step, Join):
            stage = background.get(step.name)
            if stage is None:
                continue
            if parallel:
                out.append(step)
            else:
                out.extend(_with_wait(dataclasses.replace(stage, background=False), envs))
        elif step.background and parallel:
            wait = (*envs, step.env_build) if step.env_build else ()
            out.append(dataclasses.replace(step, argv=(*wait, *step.argv), env_build=None))
        elif not step.background:
            out.extend(_with_wait(step, envs))
    return out


def _with_wait(stage: Stage, envs: Sequence[str]) -> list[Step]:
    if stage.env_build is None:
        return [stage]
    wait = Stage(f"{stage.env_build}-env", (*envs, stage.env_build))
    return [wait, dataclasses.replace(stage, env_build=None)]


@dataclasses.dataclass
class _Background:
    stage: Stage
    process: subprocess.Popen[bytes] | None  # None: it could not start
    started: float
    ended: threading.Event
    end_time: list[float]


class Runner:
    """Runs expanded steps (:func:`expand`) and keeps their results.

    Args:
        root: The clone; every stage runs there.
        logs: Where each stage's log goes (``<name>.log``).
        env: The stages' environment.
        out: Where the output goes (bytes; the terminal).
        fail_fast: Stop at the first stage that fails.
        clock: Monotonic seconds (a parameter, for tests).
    """

    def __init__(
        self,
        root: Path,
        logs: Path,
        env: Mapping[str, str],
        *,
        out: BinaryIO,
        fail_fast: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root, self.logs, self.env, self.out = root, logs, dict(env), out
        self.fail_fast, self.clock = fail_fast, clock
        self.results: list[Result] = []
        self._background: dict[str, _Background] = {}
        self._current: subprocess.Popen[bytes] | None = None

    def say(self, text: str) -> None:
        """Print a line of the runner's own."""
        self.out.write(f"{text}\n".encode())
        self.out.flush()

    def run(self, steps: Sequence[Step]) -> int | None:
        """Run ``steps``; the exit status to end with when one stopped the run, else None.

        Whatever is still running when this returns or raises has been ended.
        """
        try:
            for step in steps:
                rc = self.join(step.name) if isinstance(step, Join) else self.start(step)
                stops = self.fail_fast or (isinstance(step, Stage) and step.gate)
                if rc != 0 and stops:
                    return rc
            return None
        finally:
            self.end_all()

    def start(self, stage: Stage) -> int:
        """Run ``stage`` in the foreground, or start it in the background (0)."""
        if stage.background:
            self._start_background(stage)
            return 0
        self.say(f"== {stage.name}")
        t0, cpu0 = self.clock(), child_cpu_s()
        rc = self._foreground(stage)
        self._record(Result(stage.name, self.clock() - t0, child_cpu_s() - cpu0, rc))
        return rc

    def _foreground(self, stage: Stage) -> int:
        with (self.logs / f"{stage.name}.log").open("wb") as log:
            process = self._spawn(stage, stdout=subprocess.PIPE, log=log)
            if process is None:
                return 127
            self._current = process
            assert process.stdout is not None
            with process.stdout as pipe:
                while chunk := os.read(pipe.fileno(), 65536):
                    self.out.write(chunk)
                    self.out.flush()
                    log.write(chunk)
            rc = _exit_code(process.wait())
            self._current = None
        self._clean(stage)
        return rc

    def _spawn(
        self, stage: Stage, *, stdout: int | BinaryIO, log: BinaryIO
    ) -> subprocess.Popen[bytes] | None:
        env = dict(self.env)
        if stage.runtime_dir:
            env["JUPYTER_RUNTIME_DIR"] = str(self.logs / f"{stage.name}-runtime")
        try:
            return subprocess.Popen(
                stage.argv,
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.STDOUT if stdout == subprocess.PIPE else log,
                start_new_session=True,  # its own group: ended with it on exit
            )
        except OSError as exc:
            message = f"{stage.name}: cannot run {stage.argv[0]!r}: {exc.strerror or exc}\n"
            self.out.write(message.encode())
            log.write(message.encode())
            return None

    def _start_background(self, stage: Stage) -> None:
        self.say(f"== {stage.name}: started in the background (its output is shown when it ends)")
        started = self.clock()
        with (self.logs / f"{stage.name}.log").open("wb") as log:
            process = self._spawn(stage, stdout=log, log=log)
        ended, end_time = threading.Event(), [started]
        if process is None:
            ended.set()
        else:
            threading.Thread(
                target=_watch, args=(process.pid, ended, end_time, self.clock), daemon=True
            ).start()
        self._background[stage.name] = _Background(stage, process, started, ended, end_time)

    def join(self, name: str) -> int:
        """Wait for the background stage ``name``, show its log and record it."""
        job = self._background.pop(name)
        job.ended.wait()
        if job.process is None:
            rc, cpu = 127, 0.0
        else:
            _, status, usage = os.wait4(job.process.pid, 0)
            rc, cpu = _exit_code(os.waitstatus_to_exitcode(status)), cpu_s(usage)
            job.process.returncode = rc
        self.say(f"== {name} (ran in the background since {self.clock() - job.started:.0f} s ago)")
        self.out.write((self.logs / f"{name}.log").read_bytes())
        self._clean(job.stage)
        self._record(Result(name, job.end_time[0] - job.started, cpu, rc))
        return rc

    def _record(self, result: Result) -> None:
        self.results.append(result)
        if result.rc != 0:
            self.say(f"== {result.name} FAILED (exit {result.rc})")

    def _clean(self, stage: Stage) -> None:
        for path in stage.removes:
            target = self.root / path
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)

    def end_all(self) -> None:
        """End the foreground stage and the background ones still running, with their groups."""
        running = [self._current] if self._current is not None else []
        running += [job.process for job in self._background.values() if job.process is not None]
        for process in running:
            _end_group(process)
        self._current = None
        self._background.clear()


def _watch(
    pid: int, ended: threading.Event, end_time: list[float], clock: Callable[[], float]
) -> None:
    """Note when ``pid`` exits, without reaping it (its CPU is counted when it is joined)."""
    with contextlib.suppress(ChildProcessError):
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    end_time[0] = clock()
    ended.set()


def _exit_code(code: int) -> int:
    """A shell's exit code: 128 + N for a process killed by signal N."""
    return 128 - code if code < 0 else code


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to ``process``'s group, SIGKILL after a grace period; reaps ``process``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def stage_environment(
    root: Path, venv: Path, base: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The stages' environment: ``base`` with the project's venv active (as ``activate`` does),
    and the screenshots' folder (``UI_ARTIFACTS``, default ``artifacts/screenshots``)."""
    env = {k: v for k, v in base.items() if k != "PYTHONHOME"}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join(p for p in (str(venv / "bin"), base.get("PATH", "")) if p)
    env.setdefault("UI_ARTIFACTS", str(root / "artifacts" / "screenshots"))
    Path(env["UI_ARTIFACTS"]).mkdir(parents=True, exist_ok=True)
    return env
