"""The stage list holds together, and the runner's command line runs a part of it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scripts.ci.envs import ALL
from scripts.ci.runner import Join, Stage, expand, names_of
from scripts.ci.stages import SETUP, STAGES

ROOT = Path(__file__).resolve().parents[3]
WAIT = ("wait",)


def test_names_are_unique_and_each_join_follows_its_background_stage() -> None:
    names = names_of([*SETUP, *STAGES])
    assert len(names) == len(set(names))
    for i, step in enumerate(STAGES):
        if isinstance(step, Join):
            started = [s for s in STAGES[:i] if isinstance(s, Stage) and s.name == step.name]
            assert started and started[0].background, step
    background = [s.name for s in STAGES if isinstance(s, Stage) and s.background]
    assert sorted(background) == sorted(s.name for s in STAGES if isinstance(s, Join))


def test_every_script_a_stage_runs_exists_and_every_venv_is_known() -> None:
    for stage in (s for s in [*SETUP, *STAGES] if isinstance(s, Stage)):
        for arg in stage.argv:
            if arg.startswith("scripts/"):
                assert (ROOT / arg).exists(), (stage.name, arg)
        assert stage.env_build in (None, *ALL), stage


def test_ci_runs_the_stages_it_always_ran_in_their_order() -> None:
    def shape(parallel: bool) -> list[str]:
        steps = expand([*SETUP, *STAGES], parallel=parallel, envs=WAIT)
        return [
            f"{s.name}{' (bg)' if isinstance(s, Stage) and s.background else ''}" for s in steps
        ]

    checks = ["ruff", "format", "mypy", "layers", "sidebar"]
    notebooks = ["pytest", "browser", "nbval", "colab-env", "colab"]
    assert shape(True) == [
        "setup",
        "system-deps",
        *checks,
        "ludwig (bg)",
        *notebooks,
        "ludwig",
        "ray-env",
        "ray",
    ]
    assert shape(False) == [
        "setup",
        "system-deps",
        *checks,
        *notebooks,
        "ludwig-env",
        "ludwig",
        "ray-env",
        "ray",
    ]


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LUDWIG_NB_CI_LOGS": str(tmp_path / "logs"),
        "LUDWIG_NB_ENV_STATE": str(tmp_path / "envs"),
        "UI_ARTIFACTS": str(tmp_path / "ui"),
    }
    return subprocess.run(
        [sys.executable, "-m", "scripts.ci", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_the_command_line_lists_and_refuses_an_unknown_stage(tmp_path: Path) -> None:
    listed = _cli("--list", tmp_path=tmp_path)
    assert listed.returncode == 0
    assert listed.stdout.split() == names_of(STAGES)
    assert _cli("--setup", "--list", tmp_path=tmp_path).stdout.split()[0] == "setup"
    wrong = _cli("--only", "ruf", tmp_path=tmp_path)
    assert wrong.returncode == 2
    assert "no stage ruf; the stages: system-deps, ruff," in wrong.stderr


def test_the_command_line_runs_a_chosen_stage_and_ends_with_the_table(tmp_path: Path) -> None:
    done = _cli("--only", "ruff", tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "== ruff\n" in done.stdout
    assert done.stdout.rstrip().endswith("== all 1 stages passed")
    assert (tmp_path / "logs" / "ruff.log").read_text().strip() == "All checks passed!"
