"""The built-in engine on a GPU (issue 15): time per step against a hand-written CUDA loop
of the same math, with the data resident on the GPU and with the data in pinned host
memory (prefetched on a side stream), in fp32, with AMP (``use_mixed_precision``: bf16
where supported, else fp16 + GradScaler) and with ``trainer.compile`` (torch.compile).
Prints the share of step time spent waiting for data (host time producing the next
batch) and how many times the losses were read (host syncs) against the step count.

Without CUDA it prints that it skipped and exits 0 (``--device cpu`` runs the same code
on the CPU, small, as a smoke test).

    python -m benchmarks.engine_gpu [--rows 200000] [--batch 1024] [--epochs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.engine_speed import issue_frame

WARM = 20  # steps left out at the start (allocator, cuDNN, torch.compile warm-up)


def _config(epochs: int, batch: int, **trainer: Any) -> dict[str, Any]:
    from ludwig_nb.config import load_config

    return load_config(
        {
            "input_features": [{"name": f"n{i}", "type": "number"} for i in range(30)],
            "output_features": [{"name": "label", "type": "binary"}],
            "combiner": {"type": "concat", "num_fc_layers": 3, "output_size": 256},
            "trainer": {"epochs": epochs, "batch_size": batch, "eval_batch_size": 8192, **trainer},
        }
    ).to_dict()


def _engine(config: dict[str, Any], frame: Any, device: str) -> dict[str, float]:
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine
    from ludwig_nb.engines.builtin import trainer as trainer_module

    reads = []
    flush = trainer_module.Training._flush

    def counted(self: Any) -> None:
        reads.append(len(self.pending))
        flush(self)

    trainer_module.Training._flush = counted  # type: ignore[method-assign]
    events: list[Any] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            job = TrainJob(
                config, frame, Path(tmp), "gpu", "gpu", device=device, clock=time.perf_counter
            )
            model = BuiltinEngine().fit(job, events.append, RunControl())
    finally:
        trainer_module.Training._flush = flush  # type: ignore[method-assign]
    # Step times seen by the host are launch times; the device catches up at each loss
    # read. Evaluations start after one, so: from the start of step WARM to the start of
    # the last evaluation, less the evaluations and checkpoints between, per step.
    steps = [e for e in events if e.type == "step_finished"]
    breaks = [
        (e.start_time, e.time)
        for e in events
        if e.type in ("evaluation_finished", "checkpoint_saved")
    ]
    begin, end = steps[WARM].start_time, breaks[-1][0]
    wall = end - begin - sum(b - a for a, b in breaks[:-1] if a >= begin)
    timings = model.timings
    return {
        "step_s": wall / (len(steps) - WARM),
        "wait_share": timings["data_wait"] / max(timings["steps"], 1e-9),
        "reads": sum(1 for r in reads if r),
        "steps": len(steps),
    }


def _hand(frame: Any, epochs: int, batch: int, device: str) -> float:
    """Seconds per step of the same math written by hand, data on the device."""
    import numpy as np
    import torch
    from torch import nn
    from torch.nn import functional as F

    values = frame[[f"n{i}" for i in range(30)]].to_numpy(np.float32)
    values = (values - values.mean(0)) / values.std(0)
    rows = int(0.7 * len(values))
    x = torch.from_numpy(values[:rows]).to(device)
    y = torch.from_numpy(frame["label"].to_numpy(np.float32)[:rows]).to(device)
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    width = 30
    for _ in range(3):
        layers += [nn.Linear(width, 256), nn.ReLU()]
        width = 256
    model = nn.Sequential(*layers, nn.Linear(256, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, began = 0, 0.0
    for epoch in range(epochs):
        order = torch.randperm(rows, device=device)
        for start in range(0, rows, batch):
            if epoch == 0 and steps == WARM:  # warm-up steps excluded
                _sync(device)
                began, steps = time.perf_counter(), 0
            index = order[start : start + batch]
            loss = F.binary_cross_entropy_with_logits(model(x[index]).squeeze(-1), y[index])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            steps += 1
    _sync(device)
    return (time.perf_counter() - began) / steps


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: the GPU engine benchmark is skipped")
        return 0
    if args.device.startswith("cuda"):
        print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    else:
        torch.set_num_threads(1)  # as the engine does on a small machine
    from ludwig_nb.engines.builtin import device as device_module

    frame = issue_frame(args.rows)
    hand = statistics.median(
        _hand(frame, args.epochs, args.batch, args.device) for _ in range(args.repeats)
    )
    print(f"hand-written loop (data on the device, fp32): {1e3 * hand:.3f} ms/step")
    variants = {
        "fp32": {},
        "AMP (use_mixed_precision)": {"use_mixed_precision": True},
        "torch.compile (trainer.compile)": {"compile": True},
    }
    resident = device_module._RESIDENT_BYTES
    for placement, limit in (("resident", resident), ("pinned + prefetch", 0)):
        device_module._RESIDENT_BYTES = limit
        for name, extra in variants.items():
            config = _config(args.epochs, args.batch, **extra)
            runs = [_engine(config, frame, args.device) for _ in range(args.repeats)]
            step = statistics.median(r["step_s"] for r in runs)
            wait = statistics.median(r["wait_share"] for r in runs)
            print(
                f"  engine, {placement:17s} {name:32s} {1e3 * step:7.3f} ms/step  "
                f"ratio {step / hand:5.2f}  data wait {100 * wait:4.1f} % of step time  "
                f"loss reads {runs[0]['reads']} for {runs[0]['steps']} steps"
            )
    device_module._RESIDENT_BYTES = resident
    return 0


if __name__ == "__main__":
    sys.exit(main())
