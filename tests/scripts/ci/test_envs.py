"""The side venvs' background builds: lanes, waits, failures, stopping. The builds are stand-in
``scripts/setup/<name>_env.sh`` scripts in a scratch clone, run by the real lane process; a
wait looks again when the lane process has ended (never after a fixed sleep)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import psutil
import pytest

from scripts.ci.envs import EnvBuilds

pytestmark = pytest.mark.timeout(120)

BUILT = """venv="$(dirname "$0")/../../venvs/{name}"
mkdir -p "$venv" && touch "$venv/.complete"
echo "building {name}" >&2
echo "$(cd "$venv" && pwd)"
"""
FAILS = """for i in $(seq 50); do echo "pip line $i"; done
exit 7
"""
BLOCKS = """echo started
read line < "$(dirname "$0")/../../fifo"
"""


def clone(tmp_path: Path, **scripts: str) -> Path:
    root = tmp_path / "clone"
    (root / "scripts" / "setup").mkdir(parents=True)
    for name, body in scripts.items():
        (root / "scripts" / "setup" / f"{name}_env.sh").write_text(body.format(name=name))
    return root


def lanes(groups: set[int]) -> list[psutil.Process]:
    """The processes of the lanes' process groups."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) in groups:
                found.append(process)
    return found


def builds(tmp_path: Path, root: Path, *, ci: bool = False) -> EnvBuilds:
    state = tmp_path / "state"

    def until_the_lane_ends(seconds: float) -> None:
        groups = {int(pid_file.read_text()) for pid_file in state.glob("*.pid")}
        psutil.wait_procs(lanes(groups), timeout=60)

    return EnvBuilds(state, root=root, lanes="colab,ray ludwig", ci=ci, sleep=until_the_lane_ends)


def test_the_lanes_build_and_each_wait_says_how_its_build_ended(tmp_path: Path) -> None:
    root = clone(tmp_path, colab=BUILT, ray=FAILS, ludwig=BUILT)
    envs = builds(tmp_path, root)
    assert envs.start() == [["colab", "ray"], ["ludwig"]]
    said: list[str] = []
    assert envs.wait("colab", out=said.append) == 0
    assert envs.wait("ludwig", out=said.append) == 0
    assert envs.wait("ray", out=said.append) == 1
    assert said[0].startswith("envs: the build of colab ended in the background after")
    assert "envs: the build of ray failed (exit 7)" in said[-2]
    tail = said[-1].splitlines()
    assert tail[0] == "pip line 11" and tail[-1] == "pip line 50"  # the log's last 40 lines
    assert envs.built("colab") and envs.built("ludwig") and not envs.built("ray")
    assert [(name, rc) for name, _, _, rc in envs.summary()] == [
        ("colab", "0"),
        ("ludwig", "0"),
        ("ray", "7"),
    ]


def test_a_second_start_leaves_what_is_built_and_rebuilds_a_failure_only_by_hand(
    tmp_path: Path,
) -> None:
    root = clone(tmp_path, colab=BUILT, ray=FAILS)
    envs = builds(tmp_path, root)
    envs.start(["colab", "ray"])
    envs.wait("colab", out=lambda _: None)
    envs.wait("ray", out=lambda _: None)
    assert builds(tmp_path, root, ci=True).start(["colab", "ray"]) == []  # CI: ray stays failed
    assert envs.start(["colab", "ray"]) == [["ray"]]
    envs.wait("ray", out=lambda _: None)


def test_waiting_for_a_build_nobody_started_returns_at_once(tmp_path: Path) -> None:
    envs = builds(tmp_path, clone(tmp_path, colab=BUILT))
    assert envs.wait("colab", out=pytest.fail) == 0


def test_stop_ends_a_running_build_and_its_wait_then_fails(tmp_path: Path) -> None:
    root = clone(tmp_path, ludwig=BLOCKS)
    os.mkfifo(root / "fifo")
    envs = builds(tmp_path, root)
    envs.start(["ludwig"])
    assert envs.running("ludwig")
    assert envs.stop() == ["ludwig"]
    said: list[str] = []
    assert envs.wait("ludwig", out=said.append) == 1
    assert said[0] == "envs: the build of ludwig ended without an exit code; its log's tail:"
    assert not envs.running("ludwig")


def test_the_lane_is_not_a_child_of_who_started_it(tmp_path: Path) -> None:
    root = clone(tmp_path, ludwig=BLOCKS)
    os.mkfifo(root / "fifo")
    envs = builds(tmp_path, root)
    envs.start(["ludwig"])
    group = int((tmp_path / "state" / "ludwig.pid").read_text())
    try:
        lane = lanes({group})
        assert lane  # the lane and its build, in a group of their own (for `stop`)
        ours = {p.pid for p in psutil.Process().children(recursive=True)}
        assert not ours & {p.pid for p in lane}
    finally:
        envs.stop()
