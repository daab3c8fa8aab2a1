"""Fixtures of the Ray tests (marker ``ray``; scripts/ci/test_ray.sh runs them in the Ray venv):
one Ray started by this session with a fixed small ``num_cpus`` and shut down at the end;
no ``ray::`` process of this test process may outlive it. Never ``ray stop``.

The session's Ray nodes load the fake NVML driver (tests/fixtures/nvml, by
``LD_LIBRARY_PATH`` in the raylet's environment, which its workers inherit): every worker
reads "its node's GPUs" through the real nvidia-ml-py and ``NvmlSource``. What the fake GPU
reports is the scenario file :func:`fake_gpus` writes (read at each worker's first NVML
call, so a test sets it before its run starts); the test process itself loads no fake.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest

RAY_CPUS = 2


def ray_children(named: str = "ray::") -> list[psutil.Process]:
    """This process's live descendants whose command line holds ``named`` (Ray workers by
    default; ``"RayTrainWorker"`` for a job's training workers).

    A process that is gone, or a zombie its parent has not reaped yet (a killed worker), is
    not listed: psutil raises for it, and it no longer runs.
    """
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            if named in line or (named == "ray::" and child.name().startswith("ray::")):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def agent_ports() -> dict[str, int]:
    """Free ports for a node's agents, chosen up front (see :func:`ray_cluster`)."""
    return {
        name: _free_port()
        for name in (
            "metrics_agent_port",
            "metrics_export_port",
            "runtime_env_agent_port",
            "dashboard_agent_listen_port",
        )
    }


def head_ports() -> dict[str, int]:
    """:func:`agent_ports` and a free dashboard port: another Ray on the machine (another
    session's) may hold the default 8265, and the head then fails to start."""
    return {**agent_ports(), "dashboard_port": _free_port()}


FAKE_GPU = {
    "name": "Fake A100 (Ray node)",
    "uuid": "GPU-fake-ray-0",
    "temperature": 45,
    "utilization_gpu": 60,
    "memory_total": 42949672960,
    "memory_used": 4294967296,
    "power_mw": 120000,
    "power_limit_mw": 300000,
    "thresholds": {"shutdown": 95, "slowdown": 90},
}
_SCENARIO: dict[str, Path] = {}


def fake_gpus(temperature: float | list[float] = 45, **device) -> Path:
    """Set what the fake GPU of every Ray node reports from the next run on (°C per
    second since the worker's first NVML call; the last value repeats)."""
    path = _SCENARIO["path"]
    scenario = {
        "tick_seconds": 1.0,
        "devices": [{**FAKE_GPU, "temperature": temperature, **device}],
    }
    path.write_text(json.dumps(scenario))
    return path


def fake_nvml_env(tmp: Path) -> dict[str, str]:
    """The raylet environment that loads the fake NVML (built here) with the session's
    scenario file; skips when there is no C compiler."""
    from tests.fixtures.nvml.build import build_fake_nvml, compiler_available

    if not compiler_available():
        pytest.skip("no C compiler to build the fake NVML driver")
    lib = build_fake_nvml(tmp / "nvml").parent
    _SCENARIO["path"] = tmp / "scenario.json"
    fake_gpus()
    paths = [str(lib), *filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep))]
    return {"LD_LIBRARY_PATH": os.pathsep.join(paths), "FAKE_NVML_SCENARIO": str(_SCENARIO["path"])}


def _end_new_children(before: set[int]) -> None:
    """End this process's descendants not in ``before`` (a failed start's), by their id."""
    started = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
    for child in started:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _, alive = psutil.wait_procs(started, timeout=10)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """A one-node Ray "cluster" (``ray.cluster_utils.Cluster``) with ``RAY_CPUS`` CPUs,
    started and shut down by this test session; the driver is connected to it.

    The agents' ports are chosen up front: on a loaded 2-core machine the dashboard agent
    takes longer to start than the raylet waits for its port files (15 s in Ray 2.60), and
    ``ray.init`` has no way to pass them."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")
    if ray.is_initialized():
        pytest.fail("a Ray was already initialised in this process; the tests start their own")
    cluster = None
    env = fake_nvml_env(tmp_path_factory.mktemp("ray-nvml"))
    for attempt in range(5):  # a loaded box can miss the raylet's fixed 30 s wait, more than once
        head = {"num_cpus": RAY_CPUS, "env_vars": env, **head_ports()}
        before = {child.pid for child in psutil.Process().children(recursive=True)}
        try:
            cluster = Cluster(initialize_head=True, head_node_args=head)
            break
        except Exception as failure:  # Ray raises a bare Exception here
            ray.shutdown()
            _end_new_children(before)  # the failed head's GCS and raylet keep running else
            if "timed out during startup" not in str(failure) or attempt == 4:
                raise
    assert cluster is not None
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.fake_nvml_env = env  # for the nodes a test adds
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        deadline = time.monotonic() + 30
        while ray_children() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert ray_children() == [], "ray:: processes of this test session outlived ray.shutdown()"


@pytest.fixture
def ray_session(ray_cluster):
    import ray

    yield ray
    fake_gpus()  # the next test starts from a cool GPU


def wait_for(predicate, timeout: float = 240.0, interval: float = 0.2):
    """Poll ``predicate`` until it is truthy (returns it) or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout} s waiting for {predicate}")


def table(rows: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    colour = rng.choice(["red", "green", "blue"], size=rows)
    return pd.DataFrame({"x": x, "colour": colour, "y": (x + (colour == "red") > 0.3).astype(int)})


def ray_config(workers: int, epochs: int = 2, batch_size: int = 16, **backend):
    """A Ray run of ``workers`` ranks. Past 100 epochs it is a run the test acts on (stops,
    pauses, kills a worker of): it never stops early by itself, which on a quiet machine it
    did within 2 s, before a 1 Hz alarm could see the hot GPU."""
    trainer = {"epochs": epochs, "batch_size": batch_size, "learning_rate": 0.01}
    if epochs > 100:
        trainer["early_stop"] = -1
    return {
        "input_features": [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        "output_features": [{"name": "y", "type": "binary"}],
        "trainer": trainer,
        "backend": {"type": "ray", "trainer": {"num_workers": workers}, **backend},
    }
