"""The closing table: stages, builds, pytest's counts over the logs."""

from __future__ import annotations

from pathlib import Path

from scripts.ci.report import pytest_counts, summary
from scripts.ci.runner import Result


def test_pytest_counts_read_the_last_closing_line_in_either_form() -> None:
    quiet = "...F..\n1 failed, 5 passed, 2 skipped in 3.21s\n"
    ruled = (
        "== 3 passed, 1 error in 0.51s (0:00:00) ==\n"
        "========= 120 passed, 4 deselected in 61.20s =====\n"
    )
    counts = pytest_counts(quiet)
    assert (counts.passed, counts.failed) == (5, 1)
    counts = pytest_counts(ruled)
    assert (counts.passed, counts.failed) == (120, 0)
    errors = pytest_counts("2 failed, 3 errors in 1.00s")
    assert (errors.passed, errors.failed) == (0, 5)


def test_a_tests_own_output_or_vitest_is_not_taken_for_pytest() -> None:
    text = "print: 7 passed in the loop\n      Tests  71 passed (71)\nsaw 4 passed in 2s ago\n"
    counts = pytest_counts(text)
    assert (counts.passed, counts.failed) == (0, 0)


def test_the_table_lists_stages_builds_and_pytest_totals(tmp_path: Path) -> None:
    (tmp_path / "pytest.log").write_text("....\n4 passed in 1.00s\n")
    (tmp_path / "colab.log").write_text("..F\n1 failed, 2 passed in 9.99s\n")
    (tmp_path / "ruff.log").write_text("All checks passed!\n")
    results = [Result("ruff", 1.4, 2.6, 0), Result("colab", 120.0, 95.2, 1)]
    lines = summary(
        results, [("colab", "168", "140", "0")], tmp_path, seconds=700.2, load="1.00 0.50 0.25"
    )
    assert lines == [
        "",
        "== summary (700 s; load average 1.00 0.50 0.25)",
        "stage         seconds    cpu-s  result",
        "ruff                1        3  ok",
        "colab             120       95  FAILED (exit 1)",
        "build:colab       168      140  in the background, exit 0",
        "pytest: 6 passed, 1 failed",
        "== 1 of 2 stages FAILED",
    ]


def test_all_passed(tmp_path: Path) -> None:
    lines = summary([Result("a", 0, 0, 0)], [], tmp_path, seconds=1, load="0")
    assert lines[-2:] == ["pytest: 0 passed, 0 failed", "== all 1 stages passed"]
