"""Seconds from running a ``%%ludwig_config`` cell to its dashboard's display message
and to its first training step, in a fresh kernel.

    python -m benchmarks.time_to_dashboard [--kernels 3] [--runs 2] [--pause 3]

A real kernel (jupyter_client): ``%load_ext ludwig_nb``, then the README's churn cell
``--runs`` times; for each, the time from sending the execute request to the first
``display_data`` that carries the widget (or, without one, any display), and to the start of
the run's first step (its ``StepFinished.start_time``; the kernel and this script share the
host's clock), with the kernel's own start (launch to its first ``kernel_info`` reply) and the
first step counted from the launch beside them. The first run pays the imports; later runs do
not. Three cases, each in its own kernel, ``--kernels`` fresh kernels each, interleaved:

* "Run All": a plain ipykernel, the cell sent the instant ``%load_ext`` returns, while the
  warm-up thread is still importing (torch, ~1.1 s of import, is not loaded yet);
* "Run All, the ludwig_nb kernel": the same in the kernel ``ludwig-nb kernel install`` writes
  (and ``scripts/setup.sh`` makes the environment's ``python3``), whose warm-up starts with
  the kernel;
* "typed": a plain ipykernel, the cell sent ``--pause`` seconds after ``%load_ext``.

Both kernel specs are written into a scratch directory for the run, so what the environment
has installed does not matter. The medians are printed against the goals (dashboard and
first step <= 1 s). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ipykernel.kernelspec import install as ipykernel_install
from jupyter_client.manager import start_new_kernel

from ludwig_nb.kernelspec import install

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
    code = (
        f"_ = churn{i}.wait(); import json as _j; print(_j.dumps(next(e.start_time for e "
        f"in churn{i}.events if e.type == 'step_finished')))"
    )
    out: list[str] = []

    def keep(msg) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    client.execute_interactive(code, output_hook=keep)
    return float(json.loads("".join(out).strip().splitlines()[-1]))


def _s(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds:.2f} s"


GOAL_S = 1.0
FIGURES = ("first output", "dashboard", "first step")
#: reported beside them, no goal: the kernel's start, and the first step from the kernel's launch
CONTEXT = ("kernel ready", "from launch")


#: run before ``%load_ext`` in the "--no-hold" case: the warm-up imports pandas, bqplot and
#: torch at once instead of waiting while the first cell builds its dashboard
NO_HOLD = "import ludwig_nb.ipython.warmup as _w; _w.HOLD_MAX_S = 0.0"


def one_kernel(
    runs: int,
    pause: float,
    label: str,
    tree: str | None = None,
    before_load: str = "",
    kernel: str = "python3",
) -> list[dict[str, float | None]]:
    """``%load_ext``, ``pause`` seconds, then ``runs`` cells; prints and returns their times.

    ``tree``: a checkout whose ``ludwig_nb`` the kernel imports (None: this one);
    ``before_load``: code run before ``%load_ext``; ``kernel``: the kernel spec.
    """
    rows: list[dict[str, float | None]] = []
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (tree or str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH")) if p
    )
    with tempfile.TemporaryDirectory() as scratch:
        launched = time.monotonic()
        manager, client = start_new_kernel(kernel_name=kernel, cwd=scratch, env=env)
        ready = time.monotonic() - launched  # the kernel answered kernel_info
        try:
            client.execute_interactive(
                f"import os; os.environ['JUPYTER_RUNTIME_DIR'] = {str(Path(scratch) / 'rt')!r}"
            )
            if before_load:
                client.execute_interactive(before_load)
            client.execute_interactive("%load_ext ludwig_nb")
            time.sleep(pause)
            for i in range(runs):
                sent, sent_wall = time.monotonic(), time.time()
                msg_id = client.execute(CELL.format(i=i))
                line, dashboard = _until_display(client, msg_id, sent)
                first = _first_step_start(client, i) - sent_wall
                which = "first run" if i == 0 else f"run {i + 1}"
                since_launch = sent - launched + first
                print(
                    f"  {label:46s} {which:9s}: first output {_s(line)}, dashboard "
                    f"{_s(dashboard)}, first step {first:.2f} s after the cell (kernel ready "
                    f"{ready:.2f} s, first step {since_launch:.2f} s after its launch)",
                    flush=True,
                )
                rows.append(
                    {
                        "first output": line,
                        "dashboard": dashboard,
                        "first step": first,
                        "kernel ready": ready,
                        "from launch": since_launch,
                    }
                )
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    return rows


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _against_goal(seconds: float | None) -> str:
    if seconds is None:
        return "none (goal <= 1.0 s: NOT met)"
    verdict = "met" if seconds <= GOAL_S else f"NOT met, {seconds / GOAL_S:.1f}x the goal"
    return f"{seconds:.2f} s (goal <= {GOAL_S:.1f} s: {verdict})"


def summarize(label: str, kernels: list[list[dict[str, float | None]]]) -> None:
    """Medians over the fresh kernels, first run and later runs apart, each against its goal."""
    for which, pick in (("first run", lambda k: k[:1]), ("later runs", lambda k: k[1:])):
        rows = [row for kernel in kernels for row in pick(kernel)]
        if not rows:
            continue
        print(f"  {label}, {which} (median of {len(rows)}):")
        for figure in FIGURES:
            print(f"    {figure:12s} {_against_goal(_median([r[figure] for r in rows]))}")
        for figure in CONTEXT if which == "first run" else ():
            print(f"    {figure:12s} {_s(_median([r[figure] for r in rows]))}")


def _install_kernels() -> tuple[str, str]:
    """A plain ipykernel spec and the ludwig_nb kernel's, in a scratch Jupyter data directory
    this process searches first (what is installed in the environment does not matter)."""
    spec_root = Path(tempfile.mkdtemp(prefix="ludwig_nb-kernels-"))
    atexit.register(shutil.rmtree, spec_root, ignore_errors=True)
    plain, warm = "ttd-plain-ipykernel", "ttd-ludwig_nb"
    ipykernel_install(prefix=str(spec_root), kernel_name=plain)
    install(prefix=str(spec_root), name=warm)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(spec_root / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")) if p
    )
    return plain, warm


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2, help="cells per kernel")
    parser.add_argument("--kernels", type=int, default=3, help="fresh kernels per case")
    parser.add_argument(
        "--pause",
        type=float,
        default=3.0,
        help="seconds between %%load_ext and the first cell in the 'typed' case",
    )
    parser.add_argument("--case", choices=("both", "run-all", "typed"), default="both")
    parser.add_argument(
        "--before",
        metavar="CHECKOUT",
        help="also measure the ludwig_nb of this checkout (e.g. main), interleaved with this one",
    )
    parser.add_argument(
        "--no-hold",
        action="store_true",
        help="also Run All with the warm-up not waiting for the cell (torch at once)",
    )
    args = parser.parse_args()
    plain, warm = _install_kernels()
    trees: list[tuple[str, str | None]] = [("", None)]
    if args.before:
        trees = [("before: ", args.before), ("after: ", None)]
    cases = []
    for prefix, tree in trees:
        if args.case != "typed":
            label = f"{prefix}Run All (cell right after %load_ext)"
            cases.append((label, 0.0, tree, "", plain))
            cases.append((f"{prefix}Run All, the ludwig_nb kernel", 0.0, tree, "", warm))
        if args.case != "run-all":
            cases.append(
                (f"{prefix}typed (cell {args.pause:g} s after)", args.pause, tree, "", plain)
            )
    if args.no_hold:
        cases.append(("Run All, warm-up not held (torch at once)", 0.0, None, NO_HOLD, plain))
    print(
        "== time to dashboard and to the first step, a fresh kernel each time; cases "
        f"interleaved; load average {_load()} (1, 5, 15 min)"
    )
    results: dict[str, list[list[dict[str, float | None]]]] = {label: [] for label, *_ in cases}
    for _ in range(args.kernels):
        for label, pause, tree, before_load, kernel in cases:
            results[label].append(one_kernel(args.runs, pause, label, tree, before_load, kernel))
    print(f"== medians (load average now {_load()}); every goal is <= {GOAL_S:.1f} s")
    for label, kernels in results.items():
        summarize(label, kernels)


if __name__ == "__main__":
    main()
