"""Seconds from running a ``%%ludwig_config`` cell to its dashboard's display message
and to its first training step, in a fresh kernel.

    python -m benchmarks.time_to_dashboard [--runs 3] [--pause 3]

A real kernel (jupyter_client, the ``python3`` kernel spec): ``%load_ext ludwig_nb``, then
the README's churn cell ``--runs`` times; for each, the time from sending the execute
request to the first ``display_data`` that carries the widget (or, without one, any
display), and to the start of the run's first step (its ``StepFinished.start_time``; the
kernel and this script share the host's clock). The first run pays the imports; later
runs do not. Two cases, each in its own kernel: "Run All" (the cell sent the instant
``%load_ext`` returns, while the warm-up thread is still importing) and "typed" (the
cell sent ``--pause`` seconds later). Goals: dashboard <= 1 s, first step <= 1 s.
Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel

CELL = """%%ludwig_config --dataset demo:churn --name churn{i}
input_features:
  - {{name: international_plan, type: binary}}
  - {{name: total_day_minutes, type: number}}
  - {{name: number_customer_service_calls, type: number}}
output_features:
  - {{name: churn, type: binary}}
trainer: {{epochs: 2, batch_size: 64}}
"""
WIDGET = "application/vnd.jupyter.widget-view+json"


def _until_display(
    client, msg_id: str, sent: float, timeout: float = 120.0
) -> tuple[float | None, float | None]:
    """Seconds after ``sent`` to the cell's first display (the placeholder line) and to
    its first display carrying a widget (the dashboard); None for one that never came."""
    deadline = time.monotonic() + timeout
    first = widget = None
    while time.monotonic() < deadline:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind in ("display_data", "update_display_data"):
            now = time.monotonic() - sent
            first = now if first is None else first
            if widget is None and WIDGET in msg["content"].get("data", {}):
                widget = now
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
    return first, widget


def _first_step_start(client, i: int) -> float:
    """The wall-clock start of run ``i``'s first step (seconds since the epoch)."""
    code = (f"_ = churn{i}.wait(); import json as _j; print(_j.dumps(next(e.start_time for e "
            f"in churn{i}.events if e.type == 'step_finished')))")  # fmt: skip
    out: list[str] = []

    def keep(msg) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    client.execute_interactive(code, output_hook=keep)
    return float(json.loads("".join(out).strip().splitlines()[-1]))


def _s(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds:.2f} s"


def one_kernel(runs: int, pause: float, label: str) -> None:
    """``%load_ext``, ``pause`` seconds, then ``runs`` cells; prints each one's times."""
    with tempfile.TemporaryDirectory() as scratch:
        manager, client = start_new_kernel(kernel_name="python3", cwd=scratch)
        try:
            client.execute_interactive(f"import os; os.environ['JUPYTER_RUNTIME_DIR'] = "
                                       f"{str(Path(scratch) / 'rt')!r}")  # fmt: skip
            began = time.monotonic()
            client.execute_interactive("%load_ext ludwig_nb")
            loaded = time.monotonic() - began
            time.sleep(pause)
            for i in range(runs):
                sent, sent_wall = time.monotonic(), time.time()
                msg_id = client.execute(CELL.format(i=i))
                line, dashboard = _until_display(client, msg_id, sent)
                first = _first_step_start(client, i) - sent_wall
                which = "first run" if i == 0 else f"run {i + 1}    "
                print(f"  {label:36s} {which}: first output {_s(line)}, dashboard {_s(dashboard)}, "
                      f"first step {first:.2f} s after the cell (goals <= 1.0 s; %load_ext took "
                      f"{loaded:.2f} s)")  # fmt: skip
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--pause",
        type=float,
        default=3.0,
        help="seconds between %%load_ext and the first cell in the 'typed' case",
    )
    parser.add_argument("--case", choices=("both", "run-all", "typed"), default="both")
    args = parser.parse_args()
    print("== time to dashboard and to the first step, fresh kernel each case")
    if args.case in ("both", "run-all"):
        one_kernel(args.runs, 0.0, "Run All (cell right after %load_ext)")
    if args.case in ("both", "typed"):
        one_kernel(args.runs, args.pause, f"typed (cell {args.pause:g} s after)")


if __name__ == "__main__":
    main()
