"""Seconds from running a ``%%ludwig_config`` cell to its dashboard's display message.

    python -m benchmarks.time_to_dashboard [--runs 3] [--pause 3]

A real kernel (jupyter_client, the ``python3`` kernel spec): ``%load_ext ludwig_nb``, then
the README's churn cell ``--runs`` times; for each, the time from sending the execute
request to the first ``display_data`` that carries the widget (or, without one, any
display). The first run pays the imports; later runs do not. Printed, never asserted.
"""

from __future__ import annotations

import argparse
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


def _until_display(client, msg_id: str, sent: float, timeout: float = 120.0) -> float | None:
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "display_data" and seen is None:
            seen = time.monotonic() - sent
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            return seen
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds between %%load_ext and the first cell (a person: a few)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        manager, client = start_new_kernel(kernel_name="python3", cwd=scratch)
        try:
            client.execute_interactive(f"import os; os.environ['JUPYTER_RUNTIME_DIR'] = "
                                       f"{str(Path(scratch) / 'rt')!r}")  # fmt: skip
            began = time.monotonic()
            client.execute_interactive("%load_ext ludwig_nb")
            print(f"%load_ext ludwig_nb: {time.monotonic() - began:.2f} s")
            time.sleep(args.pause)
            for i in range(args.runs):
                sent = time.monotonic()
                msg_id = client.execute(CELL.format(i=i))
                shown = _until_display(client, msg_id, sent)
                label = "first run" if i == 0 else f"run {i + 1}"
                print(f"{label}: dashboard displayed {shown:.2f} s after the cell was sent")
                client.execute_interactive(f"_ = churn{i}.wait()")
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
