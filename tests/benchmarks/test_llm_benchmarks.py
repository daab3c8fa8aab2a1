"""The LLM pre-flight and token-aware ETA benchmarks run to the end and print their verdicts.

The memory benchmark's verdict rests on byte counts (no timing), so it must pass; the ETA
benchmark's rests on recorded timings, so only its figures are checked to be there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str, timeout: int = 280) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_memory_benchmark_meets_its_goal_on_the_quick_cases():
    pytest.importorskip("peft")
    done = _run("llm_memory", "--quick")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "PASS  activations within 5% on 3 of 3 configurations" in done.stdout


@pytest.mark.timeout(120)
def test_the_gpu_memory_check_skips_without_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: scripts/checks/gpu_check.sh runs it")
    done = _run("llm_memory_gpu")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "no CUDA device; skipped" in done.stdout


@pytest.mark.timeout(280)
def test_the_eta_benchmark_replays_the_recorded_llm_traces():
    done = _run("eta.llm")
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-3000:]
    assert "varied (pooled)" in done.stdout and "fixed (pooled)" in done.stdout
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 2, done.stdout
