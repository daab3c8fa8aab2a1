"""engine: ray against the in-kernel built-in engine, side by side in one process (run it
with the Ray venv's python): streaming latency rank 0 -> notebook, per-step time, time to
first step, and 1 vs 2 workers. Ratios are against the built-in engine of the same run.

Every variant goes through ``ludwig_nb.train`` (what a user calls) on the same config and
data. "Latency" is the driver's receive time of each StepFinished minus the time rank 0
stamped on it (same host, same clock); it includes rank 0's batching (steps are pushed every
0.2 s, other events at once). "Step" is the median of the steps' own durations on rank 0;
"first step" is from ``train()`` to the first StepFinished received (for Ray: the placement
group, the controller, the workers, torch import and the process group).
On a shared 2-core machine the numbers are noisy: report, do not gate.

    PYTHONPATH=. $(bash scripts/setup/ray_env.sh | tail -1)/bin/python benchmarks/ray_backend.py \
        [--epochs 3] [--rows 4000] [--variants builtin,ray0,ray1,ray2]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _data(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 8))
    frame = pd.DataFrame({f"x{i}": x[:, i] for i in range(8)})
    frame["y"] = (x.sum(axis=1) > 0).astype(int)
    return frame


def _config(workers: int | None, epochs: int) -> dict[str, Any]:
    config: dict[str, Any] = {
        "input_features": [{"name": f"x{i}", "type": "number"} for i in range(8)],
        "output_features": [{"name": "y", "type": "binary"}],
        "combiner": {"type": "concat", "output_size": 128, "num_fc_layers": 2},
        "trainer": {"epochs": epochs, "batch_size": 32, "learning_rate": 0.001},
    }
    if workers is not None:
        config["backend"] = {"type": "ray", "trainer": {"num_workers": workers}}
    return config


def _measure(name: str, workers: int | None, data: pd.DataFrame, epochs: int) -> dict[str, Any]:
    from ludwig_nb.core import events as ev
    from ludwig_nb.runs import train
    from ludwig_nb.runs.run import Run

    received: list[tuple[float, float]] = []  # (rank-0 stamp, driver receive time)
    original = Run.emit

    def emit(self: Run, event: Any) -> None:
        if isinstance(event, ev.StepFinished):
            received.append((event.time, time.time()))
        original(self, event)

    Run.emit = emit  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            began = time.time()
            run = train(
                _config(workers, epochs),
                data,
                results_dir=Path(tmp) / "r",
                registry_dir=Path(tmp) / "reg",
                wait=True,
            )
            total = time.time() - began
            if run.status != "completed":
                raise RuntimeError(f"{name}: {run.status}: {run.error}\n{run.traceback_text}")
            steps = [e for e in run.events if isinstance(e, ev.StepFinished)]
    finally:
        Run.emit = original  # type: ignore[method-assign]
    latency = sorted(1000 * (got - stamp) for stamp, got in received)
    durations = [1000 * (s.time - s.start_time) for s in steps]
    return {
        "variant": name,
        "steps": len(steps),
        "total_s": total,
        "first_step_s": received[0][1] - began if received else float("nan"),
        "step_ms_p50": statistics.median(durations),
        "latency_ms_p50": latency[len(latency) // 2] if latency else float("nan"),
        "latency_ms_p95": latency[int(len(latency) * 0.95)] if latency else float("nan"),
        "steps_per_s": (len(steps) - 1) / max(1e-9, steps[-1].time - steps[0].time),
    }


def _stop_latency(data: pd.DataFrame) -> tuple[int, float, float]:
    """A 2-worker run stopped after its first steps: seconds from ``run.stop()`` to the
    RunFinished event in the kernel, and to the run's end (workers gone)."""
    from ludwig_nb.core import events as ev
    from ludwig_nb.runs import train

    with tempfile.TemporaryDirectory() as tmp:
        run = train(
            _config(2, 1000), data, results_dir=Path(tmp) / "r", registry_dir=Path(tmp) / "reg"
        )
        while run.is_active and not any(isinstance(e, ev.StepFinished) for e in run.events):
            time.sleep(0.05)
        steps = sum(isinstance(e, ev.StepFinished) for e in run.events)
        clicked = time.time()
        run.stop()
        while run.is_active and not any(isinstance(e, ev.RunFinished) for e in run.events):
            time.sleep(0.01)
        finished = time.time() - clicked
        run.wait()
        return steps, finished, time.time() - clicked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--variants", default="builtin,ray0,ray1,ray2")
    args = parser.parse_args()
    data = _data(args.rows)
    variants = {"builtin": None, "ray0": 0, "ray1": 1, "ray2": 2}
    chosen = [v for v in args.variants.split(",") if v]
    if any(variants[v] for v in chosen):
        from ludwig_nb.engines.ray.driver import ensure_ray

        began = time.time()
        ensure_ray(None)  # what a run does: a local Ray with the machine's CPUs
        print(
            f"ray.init: {time.time() - began:.1f} s ({socket.gethostname()}, {os.cpu_count()} CPUs)"
        )
    results = [_measure(v, variants[v], data, args.epochs) for v in chosen]
    base = next((r for r in results if r["variant"] == "builtin"), results[0])
    print(
        f"{'variant':8} {'steps':>5} {'first step s':>12} {'step ms p50':>11} {'x builtin':>9} "
        f"{'steps/s':>8} {'latency p50/p95 ms':>19}"
    )
    for r in results:
        ratio = r["step_ms_p50"] / base["step_ms_p50"]
        print(
            f"{r['variant']:8} {r['steps']:5d} {r['first_step_s']:12.1f} "
            f"{r['step_ms_p50']:11.2f} {ratio:9.2f} {r['steps_per_s']:8.1f} "
            f"{r['latency_ms_p50']:9.1f}/{r['latency_ms_p95']:.1f}"
        )
    two = {r["variant"]: r for r in results}
    if "ray1" in two and "ray2" in two:
        rate = two["ray2"]["steps_per_s"] / two["ray1"]["steps_per_s"]
        wall = two["ray2"]["total_s"] / two["ray1"]["total_s"]
        print(
            f"2 vs 1 workers: steps/s x{rate:.2f} (a step of 2 workers is 2x the rows), "
            f"wall x{wall:.2f}"
        )
    if "ray2" in chosen:
        click, finished, returned = _stop_latency(data)
        print(
            f"Stop (2 workers): RunFinished {finished:.2f} s after the click, run over "
            f"{returned:.2f} s after it (steps before the click: {click})"
        )
    if any(variants[v] for v in chosen):
        import ray

        ray.shutdown()  # the Ray this benchmark started


if __name__ == "__main__":
    main()
