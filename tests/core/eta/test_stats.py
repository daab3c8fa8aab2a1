import math

import pytest

from ludwig_nb.core.eta.stats import (
    batch_means_variance,
    mad,
    median,
    mser_truncation,
    t_quantile_90,
)


def _prefix(values: list[float]) -> list[float]:
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def test_median_and_mad():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert mad([1.0, 2.0, 3.0, 4.0, 100.0]) == 1.0
    with pytest.raises(ValueError, match="empty"):
        median([])


def test_batch_means_variance_of_constant_is_zero():
    values = [2.0] * 100
    var, df = batch_means_variance(_prefix(values), 0, 100)
    assert var == 0.0
    assert df == 9  # b = 10, 10 batches


def test_batch_means_variance_sees_correlation():
    # Blocks of 10 equal values alternating between 1 and 3: iid variance would be 1,
    # the batch-means long-run variance is much larger.
    values = [1.0 if (i // 10) % 2 == 0 else 3.0 for i in range(100)]
    var, df = batch_means_variance(_prefix(values), 0, 100)
    assert df == 9
    assert var > 5.0


def test_batch_means_variance_too_few_batches():
    var, df = batch_means_variance(_prefix([1.0] * 15), 0, 15)
    assert math.isnan(var)
    assert df == 0


def test_t_quantile():
    assert t_quantile_90(1) == pytest.approx(3.078)
    assert t_quantile_90(11) == t_quantile_90(10)  # conservative between entries
    assert t_quantile_90(1000) == pytest.approx(1.2816)
    assert t_quantile_90(3) > t_quantile_90(30)
    with pytest.raises(ValueError):
        t_quantile_90(0)


def test_mser_cuts_a_warm_up_ramp_in_the_first_half():
    ramp = [3.0, 2.5, 2.0, 1.6, 1.3, 1.1]
    flat = [1.0 + 0.01 * ((i * 7) % 5 - 2) for i in range(30)]
    d, accepted = mser_truncation(ramp + flat, min_kept=2)
    assert accepted
    assert 4 <= d <= 7


def test_mser_rejects_a_segment_still_trending():
    rising = [1.0 + 0.1 * i for i in range(20)]
    d, accepted = mser_truncation(rising, min_kept=2)
    assert not accepted
    assert d > 10


def test_mser_winsorises_one_straggler_batch():
    flat = [1.0 + 0.01 * ((i * 7) % 5 - 2) for i in range(30)]
    flat[25] = 40.0  # one straggler late in the segment
    d, accepted = mser_truncation(flat, min_kept=2)
    assert accepted
    assert d <= 2


def test_mser_needs_enough_batches():
    assert mser_truncation([1.0, 2.0, 3.0], min_kept=2) == (0, False)
