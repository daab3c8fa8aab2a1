"""Record real CPU traces with the built-in engine: ``python -m benchmarks.eta.record``.

Trains the bundled demo datasets with short configs and copies each run's
``events.ndjson`` into ``benchmarks/eta/traces/`` (evaluation metrics stripped: the ETA
needs only the times). Uses one torch thread: on a small shared machine torch's default
thread pool makes step times far slower and burstier. Next to each trace, ``NAME.meta.json``
records the machine's load average before and after the run (step times under external
load are a stress test, not GPU behaviour).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.eta.traces import TRACES_DIR

#: name -> (demo dataset, trainer overrides)
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "churn_cpu": ("churn", {"epochs": 20, "batch_size": 32, "early_stop": -1}),
    "cars_cpu": ("cars", {"epochs": 60, "batch_size": 8, "early_stop": -1}),
    "reviews_cpu": ("reviews", {"epochs": 4, "batch_size": 32, "early_stop": -1}),
    # heavier steps (wider combiner, bigger batches): less dominated by scheduler jitter
    "churn_wide_cpu": ("churn", {"epochs": 25, "batch_size": 128, "early_stop": -1}),
}
#: combiner overrides per run
COMBINER: dict[str, dict[str, Any]] = {
    "churn_wide_cpu": {"num_fc_layers": 3, "output_size": 1024},
}


def _strip(line: str) -> str:
    data = json.loads(line)
    for key in ("metrics", "best_metrics"):
        if key in data:
            data[key] = {}
    return json.dumps(data, separators=(",", ":"))


def record(name: str, out_dir: Path) -> Path:
    """Train run ``name`` of :data:`RUNS`; returns the trace file written."""
    import torch
    import yaml

    import ludwig_nb
    from ludwig_nb.data import demo_config, demo_dataset

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    dataset, trainer = RUNS[name]
    config = yaml.safe_load(Path(demo_config(dataset)).read_text(encoding="utf-8"))
    config["trainer"].update(trainer)
    config.setdefault("combiner", {}).update(COMBINER.get(name, {}))
    with tempfile.TemporaryDirectory() as results:
        run = ludwig_nb.train(config, demo_dataset(dataset), name=name, results_dir=results)
        run.wait()
        if run.status != "completed":
            raise RuntimeError(f"{name}: run ended {run.status}")
        lines = (run.directory / "events.ndjson").read_text(encoding="utf-8").splitlines()
    out = out_dir / f"{name}.ndjson"
    out.write_text("".join(_strip(line) + "\n" for line in lines if line.strip()), "utf-8")
    meta = {
        "loadavg_before": [round(v, 2) for v in load_before],
        "loadavg_after": [round(v, 2) for v in os.getloadavg()],
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    (out_dir / f"{name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n", "utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(RUNS), help=f"of {list(RUNS)}")
    parser.add_argument("--out", default=str(TRACES_DIR))
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        began = time.perf_counter()
        path = record(name, out_dir)
        print(f"{name}: {path} ({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
