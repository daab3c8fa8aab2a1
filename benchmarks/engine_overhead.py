"""Engine overhead: the built-in engine's training steps/s against a hand-written torch loop
of the same model on the same tensors, side by side in one process.

Both run the same ECD module (same seed), optimizer, gradient clipping, batch order
(index slices of the preprocessed tensors) and read the loss every step. The engine's
training time is the wall time from its first step to its last, minus the evaluations
and checkpoints (which are printed separately, with the time spent emitting events).
Runs alternate (engine, loop, engine, loop, ...) and the best of each is compared.

Also prints the time from ``fit()`` to the first step, for the first fit in the process
(torch imported, but the optimizer's first use imports torch._dynamo) and a later one.

    python benchmarks/engine_overhead.py [--rows 20000] [--epochs 2] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _case(rows: int, epochs: int) -> tuple[dict, pd.DataFrame]:
    from ludwig_nb.config import load_config

    rng = np.random.default_rng(0)
    numbers = {f"n{i}": rng.normal(size=rows) for i in range(16)}
    frame = pd.DataFrame(numbers)
    frame["colour"] = rng.choice(list("abcdefgh"), size=rows)
    logit = frame["n0"] - frame["n1"] * frame["n2"] + (frame["colour"] == "a")
    frame["label"] = logit + rng.normal(size=rows) > 0
    config = {
        "input_features": [{"name": c, "type": "number"} for c in numbers]
        + [{"name": "colour", "type": "category"}],
        "output_features": [{"name": "label", "type": "binary"}],
        "combiner": {"type": "concat", "num_fc_layers": 2, "output_size": 64},
        "trainer": {"epochs": epochs, "batch_size": 64, "eval_batch_size": 4096},
    }
    return load_config(config).to_dict(), frame


def _engine(config: dict, frame: pd.DataFrame) -> dict[str, float]:
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    events: list = []
    with tempfile.TemporaryDirectory() as tmp:
        job = TrainJob(config, frame, Path(tmp), "bench", "bench", clock=time.perf_counter)
        called = time.perf_counter()
        model = BuiltinEngine().fit(job, events.append, RunControl())
    steps = [e for e in events if e.type == "step_finished"]
    evals = sum(e.time - e.start_time for e in events if e.type == "evaluation_finished")
    ckpts = sum(e.time - e.start_time for e in events if e.type == "checkpoint_saved")
    wall = steps[-1].time - steps[0].start_time
    return {
        "steps": len(steps),
        "train_s": wall - evals - ckpts,
        "eval_s": evals,
        "checkpoint_s": ckpts,
        "events_s": model.timings["events"],
        "data_wait_s": model.timings["data_wait"],
        "to_first_step_s": steps[0].start_time - called,
    }


def _hand_loop(config: dict, frame: pd.DataFrame) -> dict[str, float]:
    import torch

    from ludwig_nb.engines.builtin.device import batch_order
    from ludwig_nb.engines.builtin.model import ECD, Objective
    from ludwig_nb.engines.builtin.optim import build_optimizer
    from ludwig_nb.engines.builtin.setup import DEFAULT_SEED
    from ludwig_nb.engines.builtin.splits import prepare_splits

    trainer = config["trainer"]
    metadata, splits = prepare_splits(config, frame, DEFAULT_SEED)
    train = splits["training"]
    torch.manual_seed(DEFAULT_SEED)
    module = ECD(config, metadata)
    objective = Objective(config, metadata)
    optimizer = build_optimizer(module.parameters(), trainer["optimizer"], 0.001)
    clip = trainer["gradient_clipping"]["clipglobalnorm"]
    size, steps = trainer["batch_size"], 0
    began = time.perf_counter()
    for epoch in range(trainer["epochs"]):
        order = batch_order(train.rows, DEFAULT_SEED, epoch, True)
        for start in range(0, train.rows, size):
            batch = train.gather(order[start : start + size])
            loss, _ = objective(module(batch), batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            float(loss.detach())
            steps += 1
    return {"steps": steps, "train_s": time.perf_counter() - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    config, frame = _case(args.rows, args.epochs)
    ours, loop = [], []
    for _ in range(args.repeats):
        ours.append(_engine(config, frame))
        loop.append(_hand_loop(config, frame))
    best_ours = min(ours, key=lambda r: r["train_s"])
    best_loop = min(loop, key=lambda r: r["train_s"])
    ours_rate = best_ours["steps"] / best_ours["train_s"]
    loop_rate = best_loop["steps"] / best_loop["train_s"]
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), {args.rows} rows, "
        f"{best_ours['steps']} steps of batch 64, best of {args.repeats}"
    )
    print(f"  hand-written loop : {loop_rate:8.1f} steps/s")
    print(f"  built-in engine   : {ours_rate:8.1f} steps/s  (events, control, lr schedule incl.)")
    print(f"  ratio engine/loop : {ours_rate / loop_rate:8.3f}   (goal >= 0.9)")
    wait_share = 100 * best_ours["data_wait_s"] / best_ours["train_s"]
    print(
        f"  separately: evaluation {best_ours['eval_s']:.3f} s, checkpoints "
        f"{best_ours['checkpoint_s']:.3f} s, emitting events {best_ours['events_s']:.4f} s, "
        f"data wait {best_ours['data_wait_s']:.3f} s ({wait_share:.1f} % of step time)"
    )
    print(
        f"  fit() -> first step: first fit {ours[0]['to_first_step_s']:.2f} s, "
        f"later fits {min(r['to_first_step_s'] for r in ours[1:] or ours):.2f} s"
    )


if __name__ == "__main__":
    main()
