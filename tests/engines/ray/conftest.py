"""Fixtures of the Ray tests (marker ``ray``; scripts/test_ray.sh runs them in the Ray venv):
one Ray started by this session with a fixed small ``num_cpus`` and shut down at the end;
no ``ray::`` process of this test process may outlive it. Never ``ray stop``."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pandas as pd
import psutil
import pytest

RAY_CPUS = 2


def ray_children() -> list[psutil.Process]:
    """This process's descendants that are Ray workers (``ray::...``)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "ray::" in " ".join(child.cmdline()) or child.name().startswith("ray::"):
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
    return {name: _free_port() for name in ("metrics_agent_port", "metrics_export_port",
            "runtime_env_agent_port", "dashboard_agent_listen_port")}  # fmt: skip


@pytest.fixture(scope="session")
def ray_cluster():
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
    for attempt in range(3):  # a loaded box can miss the raylet's fixed wait for the agents
        ports = agent_ports()
        try:
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": RAY_CPUS, **ports})
            break
        except Exception as failure:  # Ray raises a bare Exception here
            if "timed out during startup" not in str(failure) or attempt == 2:
                raise
            ray.shutdown()
    assert cluster is not None
    ray.init(address=cluster.address, log_to_driver=False)
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

    return ray


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
    return pd.DataFrame({"x": x, "colour": colour,
                         "y": (x + (colour == "red") > 0.3).astype(int)})  # fmt: skip


def ray_config(workers: int, epochs: int = 2, batch_size: int = 16, **backend):
    return {
        "input_features": [{"name": "x", "type": "number"}, {"name": "colour", "type": "category"}],
        "output_features": [{"name": "y", "type": "binary"}],
        "trainer": {"epochs": epochs, "batch_size": batch_size, "learning_rate": 0.01},
        "backend": {"type": "ray", "trainer": {"num_workers": workers}, **backend},
    }
