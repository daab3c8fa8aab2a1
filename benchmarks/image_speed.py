"""Image inputs on the built-in engine: speed, data wait, memory and accuracy against the goals.

Parts (``--part``, default all), each printing its figures against their goals:

* ``step``: images/s per training step, the engine against a hand-written torch loop of the same
  network (Ludwig's default ``stacked_cnn`` -> concat -> linear classifier, Adam, gradients
  clipped at a global norm of 0.5 as Ludwig's default trainer does) on the same
  decoded uint8 batches of the same training split, interleaved runs, median step time (the
  engine's from step start to step start, control, events and all). Goal: the engine's step at
  most 1.2x the hand loop's. Also the share of step time spent waiting for data with the
  default ``num_processes`` (1), images in memory and in the disk cache (``in_memory: false``).
  Goal under 10 %. ``--device cuda`` runs the same on a GPU (scripts/checks/gpu_check.sh).
* ``memory``: peak RSS of a whole process training 20,000 32x32 images with ``in_memory: false``
  against the same with 2,000 (fresh processes, one epoch). Goal at most 1.5x. The evaluation
  batch is 128 rows in both (smaller than the 2,000-image run's splits), so that the batches'
  activations, which do not grow with the dataset, weigh the same in both.
* ``ludwig``: held-out accuracy and the whole process (``ludwig-nb train`` vs ``ludwig train``,
  the Ludwig 0.11 venv of scripts/setup/ludwig_env.sh) on the same config and the same fixed
  split of scikit-learn's digits as 32x32 PNG files, for the default encoder and Ludwig's
  ``_resnet_legacy``. Test accuracy at the evaluation with the best validation accuracy, read
  from each run's training_statistics.json the same way, averaged over ``--seeds`` seeds (the
  split is fixed; a seed moves the initial weights and the batch order). Goals: accuracy at
  least Ludwig's minus 0.02; at least 3x faster (the median run).

One torch thread throughout (``OMP_NUM_THREADS=1`` in subprocesses). Prints the load average.

    python -m benchmarks.image_speed [--part step] [--repeats 3] [--quick] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.engine_speed import ONE_THREAD, ROOT, _ludwig_python, _step_times

LABEL = {"name": "label", "type": "category"}


def _config(image: dict[str, Any] | None = None, **trainer: Any) -> dict[str, Any]:
    return {
        "input_features": [{"name": "image", "type": "image", **(image or {})}],
        "output_features": [LABEL],
        "trainer": {
            "epochs": 3,
            "batch_size": 64,
            "eval_batch_size": 1024,
            "learning_rate": 0.001,
            **trainer,
        },
    }


def _rendered(config: dict[str, Any]) -> dict[str, Any]:
    from ludwig_nb.config import load_config

    return load_config(config).to_dict()


def _digits(folder: Path, rows: int | None = None) -> Path:
    from ludwig_nb.data.image_datasets import write_digits

    return write_digits(folder, size=32, rows=rows)


# -- step: engine vs hand loop ------------------------------------------------------------
def engine_run(config: dict[str, Any], source: Any, device: str) -> list[Any]:
    """The events of one engine fit (data checked as ``train()`` checks it)."""
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    engine = BuiltinEngine()
    data = engine.prepare_data(config, source)
    events: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        job = TrainJob(
            config, data, Path(tmp), "b", "b", clock=time.perf_counter, threads=1, device=device
        )
        engine.fit(job, events.append, RunControl())
    return events


def _wait_share(events: list[Any]) -> float:
    steps = [e for e in events if e.type == "step_finished"]
    return sum(e.data_wait for e in steps) / sum(e.time - e.start_time for e in steps)


def _hand_net(channels: int, height: int, width: int, classes: int) -> Any:
    """Ludwig's default stacked_cnn (32 and 64 channels, 3x3 valid, 2x2 max pool, FC 128) and a
    linear classifier, written by hand."""
    import torch
    from torch import nn

    flat = 64 * ((((height - 2) // 2) - 2) // 2) * ((((width - 2) // 2) - 2) // 2)
    net = nn.Sequential(
        nn.Conv2d(channels, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(flat, 128),
        nn.ReLU(),
        nn.Linear(128, classes),
    )
    for layer in (net[7], net[9]):
        torch.nn.init.xavier_uniform_(layer.weight)
    return net


def hand_steps(images: Any, labels: Any, batch: int, epochs: int, device: str) -> list[float]:
    """Seconds per step of a plain loop over the same uint8 images (scaled on the device)."""
    import torch

    torch.manual_seed(0)
    dev = torch.device(device)
    net = _hand_net(*images.shape[1:], int(labels.max()) + 1).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=0.001)
    images, labels = images.to(dev), labels.to(dev)
    times = []
    for epoch in range(epochs):
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(epoch)).to(dev)
        for start in range(0, len(labels), batch):
            began = time.perf_counter()
            index = order[start : start + batch]
            x = images.index_select(0, index).float().div_(255.0)
            loss = torch.nn.functional.cross_entropy(net(x), labels.index_select(0, index))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)  # Ludwig's default clipping
            opt.step()
            opt.zero_grad(set_to_none=True)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - began)
    return times[1:]


def _training_split(config: dict[str, Any], source: Any) -> tuple[Any, Any]:
    """The engine's own decoded training split: uint8 images and class indices."""
    import torch

    from ludwig_nb.engines.builtin import BuiltinEngine
    from ludwig_nb.engines.builtin.splits import prepare_arrays

    _, arrays = prepare_arrays(config, BuiltinEngine().prepare_data(config, source), 42)
    train = arrays["training"]
    return torch.from_numpy(train["image"][0]), torch.from_numpy(train["label"][0])


def part_step(repeats: int, quick: bool, device: str) -> None:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        print("== image step on the GPU: skipped (no CUDA here)")
        return
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        csv = _digits(Path(tmp), 400 if quick else None)
        epochs = 1 if quick else 3
        config = _rendered(_config(epochs=epochs))
        images, labels = _training_split(config, str(csv))
        ours, hand, waits = [], [], []
        for _ in range(repeats):
            events = engine_run(config, str(csv), device)
            ours.append(statistics.median(_step_times(events)))
            waits.append(_wait_share(events))
            hand.append(statistics.median(hand_steps(images, labels, 64, epochs, device)))
        disk = _rendered(_config({"preprocessing": {"in_memory": False}}, epochs=epochs))
        disk_waits = [_wait_share(engine_run(disk, str(csv), device)) for _ in range(repeats)]
    ratio = statistics.median(ours) / statistics.median(hand)
    print(
        f"== image training step on {device} (digits 32x32, stacked_cnn, batch 64, median of "
        f"{repeats}): engine {64 / statistics.median(ours):,.0f} images/s "
        f"({1e3 * statistics.median(ours):.2f} ms), hand loop {64 / statistics.median(hand):,.0f} "
        f"images/s ({1e3 * statistics.median(hand):.2f} ms); step ratio {ratio:.2f} (goal <= 1.2)"
    )
    print(
        f"== data wait with the default num_processes: in memory "
        f"{100 * statistics.median(waits):.2f} % of step time (goal <= 10 %), disk cache "
        f"(in_memory: false) "
        f"{100 * statistics.median(disk_waits):.2f} % (goal <= 10 %)"
    )


# -- memory: 20,000 vs 2,000 images from the disk cache -----------------------------------
_MEMORY = """
    import json, resource, sys, tempfile, threading, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    import pandas as pd, psutil
    from benchmarks.image_speed import _config, _rendered, engine_run
    frame = pd.read_csv({csv!r}).head({rows})
    frame["image"] = [str(Path({csv!r}).parent / p) for p in frame["image"]]
    config = _rendered(
        _config({{"preprocessing": {{"in_memory": False}}}}, epochs=1, eval_batch_size=128)
    )
    process = psutil.Process()
    import torch
    before = process.memory_info().rss
    events = engine_run(config, frame, "cpu")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({{"before": before, "peak": peak}}))
"""


def _python(code: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **ONE_THREAD, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=1800,
    )
    if out.returncode:
        raise RuntimeError(f"benchmark subprocess failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def part_memory(large: int) -> None:
    from ludwig_nb.data.image_datasets import write_shapes

    small = large // 10
    with tempfile.TemporaryDirectory() as tmp:
        csv = write_shapes(Path(tmp), rows=large, size=32)
        figures = {
            rows: _python(_MEMORY.format(root=str(ROOT), csv=str(csv), rows=rows))
            for rows in (small, large)
        }
    peak = {rows: f["peak"] / 2**20 for rows, f in figures.items()}
    grown = {rows: (f["peak"] - f["before"]) / 2**20 for rows, f in figures.items()}
    print(
        f"== peak RSS, in_memory: false, 32x32 RGB: {large:,} images {peak[large]:.0f} MiB, "
        f"{small:,} images {peak[small]:.0f} MiB; ratio {peak[large] / peak[small]:.2f} "
        f"(goal <= 1.5); over the process before fit: +{grown[large]:.0f} MiB vs "
        f"+{grown[small]:.0f} MiB (decoded {large * 3 * 32 * 32 / 2**20:.0f} MiB on disk)"
    )


# -- against real Ludwig 0.11 -------------------------------------------------------------
def _with_split(csv: Path) -> Path:
    """The digits with Ludwig's fixed split column (70 / 10 / 20 %, seeded)."""
    frame = pd.read_csv(csv)
    order = np.random.default_rng(0).permutation(len(frame))
    split = np.zeros(len(frame), dtype=int)
    split[order[int(0.7 * len(frame)) : int(0.8 * len(frame))]] = 1
    split[order[int(0.8 * len(frame)) :]] = 2
    frame["split"] = split
    out = csv.parent / "digits_split.csv"
    frame.to_csv(out, index=False)
    return out


def _test_accuracy(statistics_file: Path) -> float:
    """Test accuracy at the evaluation with the best validation accuracy (the first such)."""
    stats = json.loads(statistics_file.read_text())
    validation = stats["validation"]["label"]["accuracy"]
    best = int(np.argmax(validation))
    return float(stats["test"]["label"]["accuracy"][best])


def _timed(cmd: list[str], cwd: Path) -> float:
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(ROOT)}
    began = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode:
        raise RuntimeError(f"{cmd[0]} {cmd[1]} failed:\n{(done.stderr or done.stdout)[-3000:]}")
    return time.perf_counter() - began


def _ludwig_case(
    name: str, encoder: dict[str, Any], work: Path, ludwig: Path, epochs: int, seeds: int
) -> None:
    import yaml

    config = _config({"encoder": encoder}, epochs=epochs)
    config["preprocessing"] = {"split": {"type": "fixed", "column": "split"}}
    (work / f"{name}.yaml").write_text(yaml.safe_dump(config))
    ours_acc, theirs_acc, ours_s, theirs_s = [], [], [], []
    for seed in range(42, 42 + seeds):
        ours_dir, theirs_dir = work / f"ours-{name}-{seed}", work / f"theirs-{name}-{seed}"
        ours_s.append(
            _timed(
                [sys.executable, "-m", "ludwig_nb.cli", "train", "-c", f"{name}.yaml", "-d",
                 "digits_split.csv", "-o", str(ours_dir), "--no-progress", "--threads", "1",
                 "--seed", str(seed)],
                work,
            )
        )  # fmt: skip
        theirs_s.append(
            _timed(
                [str(ludwig.parent / "ludwig"), "train", "--config", f"{name}.yaml", "--dataset",
                 "digits_split.csv", "--output_directory", str(theirs_dir),
                 "--skip_save_processed_input", "--random_seed", str(seed)],
                work,
            )
        )  # fmt: skip
        ours_acc.append(_test_accuracy(next(ours_dir.glob("*/training_statistics.json"))))
        theirs_acc.append(_test_accuracy(next(theirs_dir.glob("*/training_statistics.json"))))
    ours_mean, theirs_mean = statistics.mean(ours_acc), statistics.mean(theirs_acc)
    ours_t, theirs_t = statistics.median(ours_s), statistics.median(theirs_s)
    print(
        f"  {name:16s} held-out accuracy (mean of {seeds} seeds) ludwig-nb {ours_mean:.3f}, "
        f"Ludwig 0.11 {theirs_mean:.3f}; difference {ours_mean - theirs_mean:+.3f} "
        f"(goal >= -0.02); whole process ludwig-nb {ours_t:.1f} s, Ludwig {theirs_t:.1f} s; "
        f"{theirs_t / ours_t:.1f}x faster (goal >= 3)"
    )
    print(
        f"  {'':16s} per seed: ludwig-nb {', '.join(f'{a:.3f}' for a in ours_acc)}; "
        f"Ludwig {', '.join(f'{a:.3f}' for a in theirs_acc)}; seconds ludwig-nb "
        f"{', '.join(f'{t:.1f}' for t in ours_s)}; Ludwig {', '.join(f'{t:.1f}' for t in theirs_s)}"
    )


def part_ludwig(epochs: int, resnet_size: int, seeds: int) -> None:
    ludwig = _ludwig_python()
    if ludwig is None:
        print("== images vs Ludwig 0.11: skipped (run scripts/setup/ludwig_env.sh first)")
        return
    print(
        f"== images vs Ludwig 0.11 (1,797 digits as 32x32 PNG, fixed split 70/10/20, "
        f"{epochs} epochs, batch 64, one thread, Ludwig's early stopping)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _with_split(_digits(work))
        _ludwig_case("stacked_cnn", {"type": "stacked_cnn"}, work, ludwig, epochs, seeds)
        legacy = {"type": "_resnet_legacy", "resnet_size": resnet_size}
        _ludwig_case(f"resnet_legacy{resnet_size}", legacy, work, ludwig, epochs, seeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["step", "memory", "ludwig", "all"], default="all")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--memory-images", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--resnet-size", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=3, help="runs of each engine (ludwig part)")
    args = parser.parse_args()
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    if args.part in ("step", "all"):
        part_step(args.repeats, args.quick, args.device)
    if args.part in ("memory", "all"):
        part_memory(args.memory_images)
    if args.part in ("ludwig", "all"):
        part_ludwig(args.epochs, args.resnet_size, args.seeds)


if __name__ == "__main__":
    main()
