"""The quality benchmark's arithmetic: distinct seeds, the difference's interval, the verdict."""

import numpy as np
import pytest

quality = pytest.importorskip("benchmarks.quality_vs_ludwig")


def test_the_seeds_asked_for_are_distinct():
    first = quality.SEED_ORDER[:20]
    assert first[:2] == (42, 7)
    assert len(set(first)) == 20


def test_the_interval_is_welchs_and_holds_the_difference():
    ours, theirs = [0.60, 0.70, 0.80, 0.65], [0.90, 0.95, 0.70, 0.85, 0.80]
    diff, low, high = quality.difference(ours, theirs)
    assert diff == pytest.approx(np.mean(ours) - np.mean(theirs))
    # Welch: the standard error from each side's own variance
    se = np.sqrt(np.var(ours, ddof=1) / 4 + np.var(theirs, ddof=1) / 5)
    assert low < diff < high
    assert (high - low) / 2 == pytest.approx(se * 2.4, rel=0.1)  # t at ~6.9 df is about 2.37


def test_one_seed_gives_the_point_and_no_spread():
    assert quality.difference([0.5], [0.7]) == pytest.approx((-0.2, -0.2, -0.2))
    assert quality.difference([0.5, 0.5], [0.5, 0.5]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("diff", "high", "said"),
    [(0.0, 0.1, "ok"), (-0.01, 0.05, "ok"), (-0.05, 0.02, "behind?"), (-0.05, -0.02, "BEHIND")],
)
def test_behind_only_when_the_whole_interval_is(diff, high, said):
    assert quality.verdict(diff, high) == said


def test_the_paired_interval_is_over_the_per_seed_differences():
    ours, theirs = [0.80, 0.70, 0.90, 0.85], [0.79, 0.70, 0.88, 0.85]
    diff, low, high = quality.paired_difference(ours, theirs)
    diffs = np.subtract(ours, theirs)
    assert diff == pytest.approx(diffs.mean())
    # the seeds' own spread (0.08) cancels: the interval is the differences' (t at 3 df: 3.18)
    half = 3.18 * np.std(diffs, ddof=1) / 2
    assert (low, high) == pytest.approx((diff - half, diff + half), abs=1e-3)
    assert quality.paired_difference([0.5, 0.6], [0.4, 0.5]) == pytest.approx((0.1, 0.1, 0.1))
