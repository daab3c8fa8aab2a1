"""benchmarks/llm_speed.py runs at its smallest size and prints every ratio against its goal."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_llm_speed_benchmark_prints_each_case_against_its_goal():
    pytest.importorskip("peft")
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.llm_speed", "--quick", "--rows", "64"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    assert "goal <= 1.1" in out
    for case in ("full", "lora", "4-bit"):
        assert re.search(
            rf"^{re.escape(case)}\s+[\d.]+\s+[\d.]+\s+[\d,]+\s+[\d,]+\s+[\d.]+\s+(met|NOT met)$",
            out,
            re.M,
        ), out
    assert "load average:" in out
