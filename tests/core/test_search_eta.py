"""Search ETA arithmetic: finished durations, running trials' own ETAs, queued trials."""

import pytest

from ludwig_nb.core.search_eta import RunningTrial, search_remaining_s


def test_no_basis_before_a_trial_finishes_or_has_an_eta():
    assert search_remaining_s([], [RunningTrial(5.0, None)], queued=3) is None
    assert search_remaining_s([], [], queued=2) is None


def test_a_running_trial_with_its_own_eta_and_queued_trials_at_the_mean():
    remaining = search_remaining_s([10.0, 50.0, 15.0], [RunningTrial(4.0, 6.0)], queued=2)
    assert remaining == pytest.approx(6.0 + 2 * 25.0)  # the mean: the queue's expected sum


def test_a_running_trial_without_eta_is_expected_to_last_the_mean():
    remaining = search_remaining_s([10.0, 10.0], [RunningTrial(4.0, None)], queued=0)
    assert remaining == pytest.approx(6.0)
    overdue = search_remaining_s([10.0], [RunningTrial(15.0, None)], queued=0)
    assert overdue == 0.0


def test_concurrency_divides_the_queue():
    one = search_remaining_s([12.0], [], queued=4, concurrency=1)
    two = search_remaining_s([12.0], [], queued=4, concurrency=2)
    assert (one, two) == (48.0, 24.0)


def test_only_a_running_trials_eta_before_any_finished():
    assert search_remaining_s([], [RunningTrial(1.0, 9.0)], queued=0) == 9.0
