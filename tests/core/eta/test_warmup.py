from ludwig_nb.core.eta.warmup import mser_truncation


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
