"""Render the search panel, live and finished, as PNGs with headless Chromium.

    python scripts/screenshots/search.py [OUT_DIR] [--ray]   # default artifacts/screenshots

A real search on the cars demo (8 trials, 2 at once, ASHA pruning at each evaluation), shot
once when half of its trials have finished (``search_live*.png``) and once at its end
(``search_done*.png``). ``--ray`` runs the same search as Ray Tune trials on a local Ray
(run it with the Ray venv's python: ``scripts/setup/ray_env.sh``); its files end in
``_ray``. The panel's HTML is what the notebook's widget shows under its Stop/Pause
buttons (the buttons are widgets, not part of the HTML).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
import yaml
from html_shot import shoot

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ludwig_nb.data import demo_config, demo_dataset
from ludwig_nb.search import hyperopt
from ludwig_nb.ui.search_panel import search_html


def _shoot(html_text: str, out: Path, height: int = 760) -> None:
    shoot(html_text, out, width=1250, height=height)


def _config(on_ray: bool) -> str:
    config = yaml.safe_load(demo_config("cars").read_text(encoding="utf-8"))
    config["trainer"].update(epochs=8, early_stop=-1)
    config["hyperopt"] = {
        "goal": "minimize",
        "metric": "loss",
        "parameters": {
            "trainer.learning_rate": {"space": "loguniform", "lower": 0.0001, "upper": 0.1},
            "trainer.batch_size": {"space": "choice", "categories": [16, 32, 64]},
            "combiner.output_size": {"space": "choice", "categories": [16, 64, 128]},
        },
        "search_alg": {"type": "random", "random_state_seed": 3},
        "executor": {
            **({"type": "ray"} if on_ray else {}),  # local is the default (Ludwig's enum: ray)
            "num_samples": 8,
            "max_concurrent_trials": 2,
            "scheduler": {"type": "asha", "grace_period": 1, "reduction_factor": 2, "max_t": 8},
        },
    }
    return yaml.safe_dump(config)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_ray(attempts: int = 8) -> Any:
    """A one-node Ray of this script's own (2 CPUs), returned to shut down at the end.

    As the Ray tests' fixture: the agents' ports are chosen up front (a loaded machine
    starts the dashboard agent later than the raylet waits for its port files), and a
    start that misses the raylet's fixed 30 s wait is tried again.
    """
    import ray
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")
    names = (
        "metrics_agent_port",
        "metrics_export_port",
        "runtime_env_agent_port",
        "dashboard_agent_listen_port",
        "dashboard_port",
    )
    for attempt in range(attempts):
        before = {child.pid for child in psutil.Process().children(recursive=True)}
        try:
            head = {"num_cpus": 2, **{name: _free_port() for name in names}}
            cluster = Cluster(initialize_head=True, head_node_args=head)
        except Exception as failure:  # Ray raises a bare Exception when its node times out
            ray.shutdown()
            started = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
            for child in started:  # the failed head's GCS and raylet, by their ids
                with contextlib.suppress(psutil.Error):
                    child.terminate()
            psutil.wait_procs(started, timeout=10)
            if "timed out during startup" not in str(failure) or attempt == attempts - 1:
                raise
            continue
        ray.init(address=cluster.address, log_to_driver=False)
        return cluster
    raise RuntimeError("unreachable")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    on_ray = "--ray" in sys.argv
    out = Path(args[0] if args else "artifacts/screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    suffix = "_ray" if on_ray else ""
    cluster = _start_ray() if on_ray else None
    with tempfile.TemporaryDirectory() as tmp:
        search = hyperopt(
            _config(on_ray),
            str(demo_dataset("cars")),
            name="cars",
            results_dir=tmp,
            registry_dir=Path(tmp) / "reg",
        )
        live = None
        while not search.wait(0.5).is_done:
            counts = search.counts()
            done = sum(counts[s] for s in ("completed", "pruned", "failed", "stopped"))
            if live is None and done >= search.total // 2 and counts["running"]:
                live = search_html(search, time.time())
        if search.error is not None:
            raise SystemExit(f"the search failed: {search.error}")
        if live is not None:
            _shoot(live, out / f"search_live{suffix}.png")
        _shoot(search_html(search, time.time()), out / f"search_done{suffix}.png")
    if cluster is not None:
        import ray

        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
