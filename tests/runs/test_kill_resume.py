"""A training process killed with SIGKILL: its run directory survives, the registry shows
it interrupted, and a new process resumes it from its last checkpoint at the saved step."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ludwig_nb.ipython.runs_table import collect_rows
from ludwig_nb.store import rundir

CONFIG = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer:
  {epochs: 400, batch_size: 8, steps_per_checkpoint: 20, early_stop: -1, eval_batch_size: 256}
"""

CHILD = textwrap.dedent("""
    import sys, numpy as np, pandas as pd
    from pathlib import Path
    import ludwig_nb
    rng = np.random.default_rng(0)
    a = rng.normal(size=200)
    df = pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], 200), "y": a > 0})
    df.to_csv(sys.argv[3], index=False)
    run = ludwig_nb.train(open(sys.argv[1]).read(), df, name="victim", results_dir=sys.argv[2],
                          registry_dir=Path(sys.argv[4]), threads=1)
    run.wait()
""")


def _checkpointed_step(run_dir):
    import torch

    state = torch.load(run_dir / "checkpoints" / "latest.ckpt", weights_only=False)
    return int(state["step"])


@pytest.mark.slow
def test_a_killed_run_resumes_at_its_saved_step(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    results, registry, data = tmp_path / "results", tmp_path / "registry", tmp_path / "d.csv"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(config), str(results), str(data), str(registry)]
    )
    try:
        status = None
        deadline = time.monotonic() + 120  # waiting on another process, not timing it
        while time.monotonic() < deadline:
            dirs = list(results.glob("victim-*")) if results.exists() else []
            status = rundir.read_json(dirs[0] / rundir.STATUS_FILE) if dirs else None
            if status and status["checkpoints"] >= 2:
                break
            assert child.poll() is None, "the training process exited on its own"
            time.sleep(0.05)
        assert status and status["checkpoints"] >= 2
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    (run_dir,) = results.glob("victim-*")

    events = [json.loads(line) for line in (run_dir / rundir.EVENTS_FILE).read_text().splitlines()]
    assert events[0]["type"] == "phase_changed" and events[-1]["type"] != "run_finished"
    assert any(e["type"] == "checkpoint_saved" for e in events)
    (row,) = [r for r in collect_rows(registry, which="all") if r["name"] == "victim"]
    assert row["state"] == "interrupted"

    saved = _checkpointed_step(run_dir)
    import ludwig_nb

    resumed = ludwig_nb.train(
        CONFIG,
        str(data),
        name="resumed",
        results_dir=results,
        resume_from=run_dir,
        registry_dir=registry,
        threads=1,
    )
    started = None
    sub = resumed.subscribe()
    while started is None:
        started = next((e for e in sub.drain() if e.type == "run_started"), None)
        resumed.wait(0.05)
        assert not (resumed.is_done and started is None), resumed.state.error
    resumed.stop()
    resumed.wait(60)
    assert started.start_step == saved > 0
    assert resumed.status == "stopped" and resumed.step >= saved
