"""The speed benchmarks (issue 15) run to the end at their smallest sizes and print every figure
against its goal: a benchmark that broke (a moved name, a changed event, a kernel that no longer
starts) fails here rather than the next time someone measures with it. Nothing here reads or
asserts a timing; the figures are only checked to be there, and to be numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: (benchmark module, arguments at the smallest size, lines that must print a figure)
QUICK = [
    ("engine_speed", ["--part", "step", "--quick", "--repeats", "1", "--case", "issue"], 1),
    ("engine_speed", ["--part", "runlayer", "--quick", "--repeats", "1"], 2),
    ("engine_speed", ["--part", "eval", "--quick", "--repeats", "1"], 2),
    ("engine_speed", ["--part", "first", "--repeats", "1"], 2),
    ("engine_speed", ["--part", "memory", "--memory-rows", "20000"], 1),
    ("time_to_dashboard", ["--kernels", "1", "--runs", "1", "--case", "run-all"], 6),
    ("image_speed", ["--part", "step", "--quick", "--repeats", "1"], 2),
    ("image_speed", ["--part", "memory", "--memory-images", "400"], 1),
]
#: a figure against its goal: "... 1.07 ... (goal <= 1.3)" or "0.86 s (goal <= 1.0 s: met)"
FIGURE = re.compile(r"\d+\.\d+.*\(goal <= \d")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("module", "args", "figures"), QUICK, ids=str)
def test_the_benchmark_runs_and_prints_its_figures_against_their_goals(module, args, figures):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    printed = [line for line in done.stdout.splitlines() if FIGURE.search(line)]
    assert len(printed) >= figures, done.stdout
