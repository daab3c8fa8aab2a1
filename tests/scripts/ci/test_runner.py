"""The CI stage runner: order, output and logs, exit codes, the background stage, ending
what runs. Real processes (``sh``); no sleeps: a background stage and a later foreground one
meet at a FIFO, which neither gets past unless both run at once."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import psutil
import pytest

from scripts.ci.runner import Join, Result, Runner, Stage, expand, select, stage_environment

WAIT = ("envs-wait",)  # stands for `python3 -m scripts.ci.envs wait` in expand()


def sh(script: str) -> tuple[str, ...]:
    return ("sh", "-c", script)


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    logs = tmp_path / "logs"
    logs.mkdir()
    env = stage_environment(tmp_path, tmp_path / "venv", {"PATH": os.environ["PATH"]})
    return Runner(tmp_path, logs, env, out=io.BytesIO())


def shown(runner: Runner) -> str:
    assert isinstance(runner.out, io.BytesIO)
    return runner.out.getvalue().decode()


def outcome(runner: Runner) -> list[tuple[str, int]]:
    return [(r.name, r.rc) for r in runner.results]


def test_every_stage_runs_in_order_with_its_output_shown_logged_and_its_exit_code_kept(
    runner: Runner,
) -> None:
    stopped = runner.run(
        [
            Stage("one", sh("echo first; echo to-stderr >&2")),
            Stage("two", sh("echo second; exit 3")),
            Stage("three", sh("echo third")),
        ]
    )
    assert stopped is None
    assert outcome(runner) == [("one", 0), ("two", 3), ("three", 0)]
    text = shown(runner)
    assert text.index("== one\nfirst\n") < text.index("== two\nsecond\n") < text.index("third")
    assert "to-stderr" in text
    assert "== two FAILED (exit 3)" in text
    assert (runner.logs / "one.log").read_text() == "first\nto-stderr\n"
    assert (runner.logs / "two.log").read_text() == "second\n"


def test_fail_fast_stops_at_the_first_failure_with_its_code(runner: Runner) -> None:
    runner.fail_fast = True
    stopped = runner.run(
        [Stage("ok", sh("true")), Stage("bad", sh("exit 4")), Stage("never", sh("true"))]
    )
    assert stopped == 4
    assert outcome(runner) == [("ok", 0), ("bad", 4)]


def test_a_failed_gate_ends_the_run_without_fail_fast(runner: Runner) -> None:
    stopped = runner.run([Stage("setup", sh("exit 2"), gate=True), Stage("ruff", sh("true"))])
    assert stopped == 2
    assert outcome(runner) == [("setup", 2)]


def test_a_command_that_does_not_exist_fails_its_stage_only(runner: Runner) -> None:
    runner.run([Stage("missing", ("no-such-command-here",)), Stage("next", sh("true"))])
    assert outcome(runner) == [("missing", 127), ("next", 0)]
    assert "cannot run 'no-such-command-here'" in (runner.logs / "missing.log").read_text()


def test_a_signal_is_an_exit_code_as_a_shell_gives_it(runner: Runner) -> None:
    runner.run([Stage("killed", sh("kill -TERM $$"))])
    assert outcome(runner) == [("killed", 128 + 15)]


@pytest.mark.timeout(60)
def test_the_background_stage_runs_beside_the_next_ones_and_is_shown_at_its_join(
    runner: Runner, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "fifo")
    burn = f"{sys.executable} -c 'sum(range(3 * 10**6))'"
    stopped = runner.run(
        [
            # blocks until the foreground stage below writes to the FIFO: both must run at once
            Stage("side", sh(f"read line < fifo; echo side got $line; {burn}"), background=True),
            Stage("main", sh("echo hello > fifo; echo main done")),
            Join("side"),
            Stage("after", sh("true")),
        ]
    )
    assert stopped is None
    assert outcome(runner) == [("main", 0), ("side", 0), ("after", 0)]
    text = shown(runner)
    assert "== side: started in the background" in text
    assert text.index("main done") < text.index("== side (ran in the background since")
    assert text.index("side got hello") < text.index("== after")
    side, main = (next(r for r in runner.results if r.name == n) for n in ("side", "main"))
    # the background's CPU is its own, counted at its join, not the foreground stage's
    assert side.cpu_s > main.cpu_s


def test_a_failed_background_stage_fails_at_its_join(runner: Runner) -> None:
    runner.run([Stage("side", sh("exit 5"), background=True), Join("side")])
    assert outcome(runner) == [("side", 5)]
    assert "== side FAILED (exit 5)" in shown(runner)


def test_a_stage_gets_its_own_runtime_dir_and_its_leftovers_are_removed(
    runner: Runner, tmp_path: Path
) -> None:
    runner.run(
        [
            Stage(
                "nb",
                sh('echo "$JUPYTER_RUNTIME_DIR"; mkdir -p results/x'),
                runtime_dir=True,
                removes=("results",),
            ),
            Stage("env", sh('echo "$VIRTUAL_ENV"; echo "$PATH"')),
        ]
    )
    assert (runner.logs / "nb.log").read_text().strip() == str(runner.logs / "nb-runtime")
    assert not (tmp_path / "results").exists()
    venv, path = (runner.logs / "env.log").read_text().split()
    assert venv == str(tmp_path / "venv") and path.startswith(f"{tmp_path / 'venv' / 'bin'}:")


@pytest.mark.timeout(60)
def test_what_still_runs_when_the_run_stops_is_ended_with_its_group(
    runner: Runner, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "fifo")
    runner.fail_fast = True
    side = "sleep 600 & echo $! > child.pid; echo ready > fifo; wait"
    stopped = runner.run(
        [
            Stage("side", sh(side), background=True),
            Stage("main", sh("cat fifo; exit 3")),
            Join("side"),
        ]
    )
    assert stopped == 3
    child = psutil.Process(int((tmp_path / "child.pid").read_text()))
    child.wait(timeout=30)  # ended with the stage's group (raises if it is still running)


@pytest.mark.timeout(60)
def test_an_interrupted_run_ends_the_stages_it_started(runner: Runner, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")

    class Interrupting(io.BytesIO):
        def write(self, data: bytes) -> int:  # type: ignore[override]
            if b"== main" in data:
                raise KeyboardInterrupt
            return super().write(data)

    runner.out = Interrupting()
    side = "sleep 600 & echo $! > child.pid; echo ready > fifo; wait"
    with pytest.raises(KeyboardInterrupt):
        runner.run(
            [
                Stage("side", sh(side), background=True),
                Stage("wait", sh("cat fifo")),
                Stage("main", sh("true")),
            ]
        )
    psutil.Process(int((tmp_path / "child.pid").read_text())).wait(timeout=30)


def test_select_keeps_the_named_stages_and_their_joins() -> None:
    steps = [Stage("a", ("x",)), Stage("b", ("x",), background=True), Stage("c", ("x",)), Join("b")]
    assert [s.name for s in select(steps, only=["a", "b"])] == ["a", "b", "b"]
    assert [s.name for s in select(steps, skip=["b"])] == ["a", "c"]
    with pytest.raises(ValueError, match="no stage zz; the stages: a, b, c"):
        select(steps, only=["zz"])


def test_expand_puts_a_venv_wait_before_its_stage_or_inside_the_background_job() -> None:
    steps = [
        Stage("lud", ("t.sh",), env_build="ludwig", background=True),
        Stage("main", ("m",)),
        Stage("colab", ("c.sh",), env_build="colab"),
        Join("lud"),
    ]
    parallel = expand(steps, parallel=True, envs=WAIT)
    assert parallel == [
        Stage("lud", ("envs-wait", "ludwig", "t.sh"), background=True),
        Stage("main", ("m",)),
        Stage("colab-env", ("envs-wait", "colab")),
        Stage("colab", ("c.sh",)),
        Join("lud"),
    ]
    serial = expand(steps, parallel=False, envs=WAIT)
    assert [(s.name, s.argv) for s in serial if isinstance(s, Stage)] == [
        ("main", ("m",)),
        ("colab-env", ("envs-wait", "colab")),
        ("colab", ("c.sh",)),
        ("ludwig-env", ("envs-wait", "ludwig")),
        ("lud", ("t.sh",)),
    ]
    assert not any(isinstance(s, Join) or s.background for s in serial)


def test_results_are_plain_records() -> None:
    assert Result("a", 1.0, 0.5, 0) == Result("a", 1.0, 0.5, 0)
