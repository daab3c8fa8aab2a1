"""Fixtures for the server extension: a jupyter server with ludwig_nb enabled, runs on disk.

pytest-jupyter's fixtures are imported here (not through ``pytest_plugins``, which pytest
allows only in the rootdir conftest) so that they, and its autouse event loop, stay scoped
to ``tests/server``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403

from ludwig_nb.core.events import RunFinished, StepFinished
from ludwig_nb.store import rundir
from ludwig_nb.store.registry import register_run, registry_dir, registry_entry


@pytest.fixture
def extra_server_config() -> dict[str, Any]:
    """Extra ServerApp config for one test (override with ``parametrize``)."""
    return {}


@pytest.fixture
def jp_server_config(extra_server_config: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {"ServerApp": {"jpserver_extensions": {"ludwig_nb": True}}}
    for section, values in extra_server_config.items():
        config.setdefault(section, {}).update(values)
    return config


@pytest.fixture
def registry(jp_runtime_dir: Path) -> Path:
    """The registry directory the extension reads (JUPYTER_RUNTIME_DIR is per test)."""
    return registry_dir(jp_runtime_dir)


@pytest.fixture(scope="session")
def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


class FakeRun:
    """A run as the run layer leaves it on disk, driven by hand instead of by a trainer.

    ``poll()`` is what a training process does once a second: consume ``control.json`` and
    apply it (stop -> ``RunFinished(stopped)`` event + final status.json).
    """

    def __init__(
        self, registry: Path, root: Path, run_id: str, name: str, pid: int, kernel: str = "k-1"
    ) -> None:
        self.run_id = run_id
        self.directory = root / run_id
        self.directory.mkdir(parents=True)
        self.status: dict[str, Any] = {
            "run_id": run_id,
            "name": name,
            "status": "training",
            "step": 0,
            "total_steps": 100,
            "progress": 0.0,
            "latest_metrics": {},
            "best_metrics": {},
            "alarms": [],
            "eta": None,
            "pid": pid,
            "directory": str(self.directory),
        }
        entry = registry_entry(
            run_id, name, self.directory, pid, time.time(), kernel=kernel, notebook="nb.ipynb"
        )
        register_run(registry, entry)
        self.write_status()

    def write_status(self, **changes: Any) -> None:
        self.status.update(changes, written_at=time.time())
        rundir.write_json_atomic(self.directory / rundir.STATUS_FILE, self.status)

    def emit(self, event: Any) -> None:
        with open(self.directory / rundir.EVENTS_FILE, "a", encoding="utf-8") as handle:
            handle.write(event.to_json() + "\n")

    def step(self, step: int) -> None:
        now = time.time()
        self.emit(
            StepFinished(time=now, step=step, epoch=0, start_time=now, batch_size=8, loss=1.0)
        )
        self.write_status(step=step + 1, progress=(step + 1) / 100)

    def poll(self) -> str | None:
        request = rundir.consume_control(self.directory)
        action = request["action"] if request else None
        if action == "stop":
            step = int(self.status["step"])
            self.emit(RunFinished(time=time.time(), status="stopped", step=step, reason="sidebar"))
            self.write_status(status="stopped", eta=None)
        elif action == "pause":
            self.write_status(status="paused", pause_reason="control_file")
        elif action == "resume":
            self.write_status(status="training", pause_reason="")
        return action


@pytest.fixture
def make_run(registry: Path, tmp_path: Path) -> Iterator[Callable[..., FakeRun]]:
    def make(
        run_id: str = "demo-20261130-080000-abc123",
        name: str = "demo",
        pid: int = 0,
        kernel: str = "k-1",
    ) -> FakeRun:
        root = tmp_path / "results"
        return FakeRun(registry, root, run_id, name, pid or os.getpid(), kernel)

    yield make
