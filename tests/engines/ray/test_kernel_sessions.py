"""Several Ray runs and a search in one process that starts its own local Ray, as a kernel
does (marker ``ray``; scripts/ci/test_ray.sh): one after another, then two at once, then a
search on Ray Tune; the process lives on and Ray stays up for the next cell.

The runs start Ray themselves (no ``ray.init`` before), on their own threads: the local Ray
must outlive the first run's thread (it once died with it, and the next run ended the
process). It runs in a child process, with its own Ray, shut down with it.

The test session's Ray cluster is up meanwhile: ``ray.cluster_utils.Cluster`` names it in
``/tmp/ray/ray_current_cluster``, as ``ray start`` does. The kernel must start its own Ray
all the same: one that joined that cluster had token authentication on for itself alone
(``~/.ray/auth_token``), was refused by the cluster's GCS, and every actor it created was
destroyed before it ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("ray")

pytestmark = [pytest.mark.ray, pytest.mark.timeout(900)]

_KERNEL = textwrap.dedent(
    """
    import json, sys, threading
    import numpy as np, pandas as pd
    import ray
    import ludwig_nb

    out = sys.argv[1]
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    data = pd.DataFrame({"x": x, "y": (x > 0).astype(int)})
    config = {
        "input_features": [{"name": "x", "type": "number"}],
        "output_features": [{"name": "y", "type": "binary"}],
        "trainer": {"epochs": 1, "batch_size": 16},
        "backend": {"type": "ray", "trainer": {"num_workers": 2}},
    }
    common = {"results_dir": out, "registry_dir": out + "/reg"}
    report = {"initialized_before": ray.is_initialized(), "runs": []}

    def train(name, wait=True):
        return ludwig_nb.train(config, data, name=name, wait=wait, **common)

    for name in ("first", "second"):  # one after another: each on its own run thread
        run = train(name)
        report["runs"].append((name, run.status, str(run.error or "")))
    both = [train("third", wait=False), train("fourth", wait=False)]  # two at once
    for run in both:
        run.wait()
        report["runs"].append((run.name, run.status, str(run.error or "")))
    search = ludwig_nb.hyperopt(
        {
            **{k: v for k, v in config.items() if k != "backend"},  # trials: Tune's actors
            "hyperopt": {
                "parameters": {
                    "trainer.learning_rate": {"space": "choice", "categories": [0.01, 0.1]}
                },
                "executor": {"type": "ray", "num_samples": 1, "cpu_resources_per_trial": 1},
            },
        },
        data,
        name="search",
        wait=True,
        **common,
    )
    report["search"] = (str(search.error or ""), search.counts())
    report["threads"] = sorted(t.name for t in threading.enumerate() if "ray-host" in t.name)
    report["initialized_after"] = ray.is_initialized()
    report["cpus"] = ray.cluster_resources().get("CPU")
    report["gcs_address"] = ray.get_runtime_context().gcs_address
    print("REPORT " + json.dumps(report), flush=True)
    """
)


def test_runs_one_after_another_at_once_and_a_search_share_the_kernels_ray(
    ray_cluster, tmp_path: Path
):
    from ray._private.utils import read_ray_address

    # the session's cluster is the one a bare ray.init() would join
    assert read_ray_address() == ray_cluster.address
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", _KERNEL, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=840,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert done.returncode == 0 and lines, (done.returncode, done.stderr[-3000:])
    report = json.loads(lines[-1].removeprefix("REPORT "))
    assert report["initialized_before"] is False  # the first run started the local Ray
    assert report["gcs_address"] != ray_cluster.address  # its own, not the one on the machine
    assert report["runs"] == [
        ["first", "completed", ""],  # once: "ProgressChannel ... cancelled before it started"
        ["second", "completed", ""],  # once: "Failed to connect to GCS ..." and the end
        ["third", "completed", ""],
        ["fourth", "completed", ""],
    ]
    error, counts = report["search"]
    assert error == "" and counts["completed"] == 1
    assert report["initialized_after"] is True and report["threads"] == ["ludwig_nb-ray-host"]
