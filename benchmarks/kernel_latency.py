"""Kernel responsiveness while a run trains: a trivial cell's round trip, idle vs training.

Starts a real kernel through jupyter_client and times ``execute("1 + 1")`` (request sent
to ``execute_reply`` received) 50 times while the kernel is idle, then 50 times while a
run trains in a background thread of that kernel, once without and once with the live
dashboard (the UI pump drawing frames). Prints p50/p95 (milliseconds) side by side and
the ratio to idle. Goal: p95 < 100 ms while training on CPU.

    python benchmarks/kernel_latency.py [--repeats 50] [--gap 0.05]

The kernel reports its GIL switch interval and torch's thread count, since those decide
how long the main thread waits for the interpreter while the training thread runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from jupyter_client.manager import start_new_kernel

SETUP = """
import sys, tempfile, time
import numpy as np, pandas as pd, torch
from ludwig_nb.runs import train
rng = np.random.default_rng(0)
n = 4000
df = pd.DataFrame({"tenure": rng.integers(0, 70, n), "plan": rng.choice(list("abc"), n)})
df["churned"] = (df.tenure < 20) & (rng.random(n) < 0.7)
CONFIG = '''
input_features: [{name: tenure, type: number}, {name: plan, type: category}]
output_features: [{name: churned, type: binary}]
trainer: {epochs: 200, batch_size: 16}
'''
print(f"switch interval {sys.getswitchinterval() * 1000:.1f} ms, torch threads "
      f"{torch.get_num_threads()}, torch {torch.__version__}")
"""
START = """
run = train(CONFIG, df, name="latency", results_dir=tempfile.mkdtemp())
while run.step < 50:  # past start-up, into the steady step loop
    time.sleep(0.05)
"""
START_WITH_DASHBOARD = (
    START
    + """
from ludwig_nb.ui import show_run
show_run(run)
"""
)
START_ONE_THREAD = "torch.set_num_threads(1)\n" + START
SPIN = """
import threading
spinning = True
def _spin():  # pure Python: holds the GIL except at the interpreter's forced switches
    x = 0
    while spinning:
        x += 1
spinner = threading.Thread(target=_spin, daemon=True)
spinner.start()
"""
STOP = "run.stop(); run.wait(60); print(run.status, run.step)"
STOP_SPIN = "spinning = False; spinner.join(); print('spinner stopped')"
SCENARIOS = (  # (label, start code, stop code, has a run)
    ("GIL spin (no torch)", SPIN, STOP_SPIN, False),
    ("training", START, STOP, True),
    ("training, 1 torch thread", START_ONE_THREAD, STOP + "; torch.set_num_threads(2)", True),
    ("training + dashboard", START_WITH_DASHBOARD, STOP, True),
    (
        "GIL spin, 1 ms switch",
        "sys.setswitchinterval(0.001)\n" + SPIN,
        STOP_SPIN + "; sys.setswitchinterval(0.005)",
        False,
    ),
    (
        "training + dashboard, 1 thr",
        START_WITH_DASHBOARD.replace("run = train", "torch.set_num_threads(1)\nrun = train"),
        STOP + "; torch.set_num_threads(2)",
        True,
    ),
)
STEPS = "print(run.step)"


def _execute(client: Any, code: str, timeout: float = 300.0) -> tuple[float, str]:
    """Run ``code``; seconds from request to reply, and what it printed."""
    start = time.perf_counter()
    msg_id = client.execute(code)
    reply = client.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=timeout)
    elapsed = time.perf_counter() - start
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"cell failed: {reply['content'].get('evalue')}")
    return elapsed, _stdout(client, msg_id)


def _stdout(client: Any, msg_id: str) -> str:
    """Collect the stream output of ``msg_id`` until the kernel is idle again."""
    out = []
    while True:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)


def _times(client: Any, repeats: int, gap: float) -> list[float]:
    samples = []
    for _ in range(repeats):
        elapsed, _ = _execute(client, "1 + 1")
        samples.append(elapsed * 1000)
        time.sleep(gap)  # a person's pace between cells, not back-to-back requests
    return samples


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between cells")
    args = parser.parse_args()

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        _, info = _execute(client, SETUP)
        print(info.strip(), f"| host: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        results: dict[str, list[float]] = {"idle": _times(client, args.repeats, args.gap)}
        for label, start, stop, has_run in SCENARIOS:
            _execute(client, start)
            before = int(_execute(client, STEPS)[1]) if has_run else 0
            t0, load = time.perf_counter(), os.getloadavg()[0]
            results[label] = _times(client, args.repeats, args.gap)
            after = int(_execute(client, STEPS)[1]) if has_run else 0
            rate = (after - before) / (time.perf_counter() - t0)
            _, stopped = _execute(client, stop)
            print(f"{label}: load {load:.1f}, {rate:.0f} steps/s; then {stopped.strip()}")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)

    idle_p95 = _p(results["idle"], 0.95)
    print(f"\n{'':26} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p95/idle':>9}")
    for label, samples in results.items():
        p95 = _p(samples, 0.95)
        print(
            f"{label:26} {statistics.median(samples):8.1f} {p95:8.1f} {max(samples):8.1f} "
            f"{p95 / idle_p95:9.1f}"
        )
    worst = max(_p(s, 0.95) for k, s in results.items() if k.startswith("training"))
    print(f"\ngoal p95 < 100 ms while training: {'met' if worst < 100 else 'NOT met'}")


if __name__ == "__main__":
    main()
