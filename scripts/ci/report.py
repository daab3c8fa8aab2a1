"""The closing table of a CI run: each stage's seconds, CPU seconds and result, the side
venvs' background builds beside them, and pytest's counts added up over every stage's log.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from scripts.ci.runner import Result

__all__ = ["PytestCounts", "pytest_counts", "summary"]

# pytest's closing line ("== 3 failed, 120 passed, 2 skipped in 61.20s (0:01:01) ==", or
# without the rules under -q); a line of counts only, so that a test's own output never
# matches
_CLOSING = re.compile(r"^=*\s*(\d+ [a-z]+(, \d+ [a-z]+)*) in \d+(\.\d+)?s\b")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")


@dataclasses.dataclass
class PytestCounts:
    """Tests passed and failed (errors count as failures) over some logs."""

    passed: int = 0
    failed: int = 0

    def __add__(self, other: PytestCounts) -> PytestCounts:
        return PytestCounts(self.passed + other.passed, self.failed + other.failed)


def pytest_counts(text: str) -> PytestCounts:
    """The counts of the last pytest closing line in ``text`` (none: zeros)."""
    closing = [m.group(1) for line in text.splitlines() if (m := _CLOSING.match(line))]
    counts = PytestCounts()
    for number, word in _COUNT.findall(closing[-1] if closing else ""):
        if word == "passed":
            counts.passed += int(number)
        else:
            counts.failed += int(number)
    return counts


def _row(name: str, seconds: str, cpu: str, result: str) -> str:
    return f"{name:<12} {seconds:>8} {cpu:>8}  {result}"


def summary(
    results: Sequence[Result],
    builds: Iterable[tuple[str, str, str, str]],
    logs: Path,
    *,
    seconds: float,
    load: str,
) -> list[str]:
    """The table's lines.

    Args:
        results: The stages, in the order they finished.
        builds: (venv, seconds, CPU seconds, exit code) of each background build.
        logs: The folder of the stages' logs (pytest's lines are read there).
        seconds: The run's wall seconds so far.
        load: The load average to show.
    """
    lines = ["", f"== summary ({seconds:.0f} s; load average {load})"]
    lines.append(_row("stage", "seconds", "cpu-s", "result"))
    for r in results:
        result = "ok" if r.rc == 0 else f"FAILED (exit {r.rc})"
        lines.append(_row(r.name, f"{r.seconds:.0f}", f"{r.cpu_s:.0f}", result))
    for name, build_s, cpu, rc in builds:  # (their waits are the *-env stages above)
        lines.append(_row(f"build:{name}", build_s, cpu, f"in the background, exit {rc}"))
    total = PytestCounts()
    for log in sorted(logs.glob("*.log")):
        total += pytest_counts(log.read_text(errors="replace"))
    lines.append(f"pytest: {total.passed} passed, {total.failed} failed")
    failed = sum(r.rc != 0 for r in results)
    if failed:
        lines.append(f"== {failed} of {len(results)} stages FAILED")
    else:
        lines.append(f"== all {len(results)} stages passed")
    return lines
