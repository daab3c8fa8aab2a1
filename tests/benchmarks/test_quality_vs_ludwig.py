"""The quality benchmark's arithmetic: distinct seeds, the paired interval, the verdict."""

import numpy as np
import pytest

quality = pytest.importorskip("benchmarks.quality_vs_ludwig")


def test_the_seeds_asked_for_are_distinct():
    first = quality.SEED_ORDER[:20]
    assert first[:2] == (42, 7)
    assert len(set(first)) == 20


def test_one_seed_gives_the_point_and_no_spread():
    assert quality.paired_difference([0.5], [0.7]) == pytest.approx((-0.2, -0.2, -0.2))
    assert quality.paired_difference([0.5, 0.6], [0.5, 0.6]) == (0.0, 0.0, 0.0)


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
