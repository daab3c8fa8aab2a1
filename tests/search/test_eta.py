"""Search ETA: the per-trial cost model, running trials' own ETAs, queued trials on slots."""

import math

import pytest

from ludwig_nb.search.eta import (
    FinishedTrial,
    RunningTrial,
    TrialCostModel,
    TrialShape,
    search_remaining_s,
)


def _law(batch: int) -> float:
    """The step time of the synthetic trials below: 2 ms * batch ** 0.5."""
    return 0.002 * batch**0.5


def _finished(batch: int, epochs: int = 4, rows: int = 640, share: float = 1.0) -> FinishedTrial:
    """A trial whose duration follows _law plus 1 s + 0.25 s per evaluation, that trained
    ``share`` of its planned steps (and evaluations)."""
    planned = epochs * math.ceil(rows / batch)
    steps = round(planned * share)
    evaluations = epochs
    duration = 1.0 + 0.25 * evaluations * share + steps * _law(batch)
    return FinishedTrial(duration, TrialShape(batch, planned, evaluations), steps, _law(batch))


def test_no_basis_before_a_trial_finishes_or_has_an_eta():
    assert search_remaining_s([], [RunningTrial(5.0, None)], queued=3) is None
    assert search_remaining_s([], [], queued=2) is None
    assert TrialCostModel.fit([FinishedTrial(10.0)]) is None  # no shape: nothing to model


def test_without_shapes_a_queued_trial_costs_the_mean_duration():
    finished = [FinishedTrial(d) for d in (10.0, 50.0, 15.0)]
    remaining = search_remaining_s(finished, [RunningTrial(4.0, 6.0)], queued=2)
    assert remaining == pytest.approx(6.0 + 2 * 25.0)


def test_a_running_trial_without_eta_is_expected_to_last_the_mean():
    remaining = search_remaining_s([FinishedTrial(10.0)] * 2, [RunningTrial(4.0, None)], queued=0)
    assert remaining == pytest.approx(6.0)
    overdue = search_remaining_s([FinishedTrial(10.0)], [RunningTrial(15.0, None)], queued=0)
    assert overdue == 0.0


def test_only_a_running_trials_eta_before_any_finished():
    assert search_remaining_s([], [RunningTrial(1.0, 9.0)], queued=0) == 9.0


def test_the_model_recovers_the_step_time_law_and_the_overhead():
    model = TrialCostModel.fit([_finished(8), _finished(32, epochs=8), _finished(128)])
    assert model is not None
    assert model.power == pytest.approx(0.5)
    assert model.step_s(64) == pytest.approx(_law(64))
    assert (model.overhead_a, model.overhead_b) == pytest.approx((1.0, 0.25), abs=0.05)
    unseen = _finished(16, epochs=6)  # another batch size and another number of epochs
    assert unseen.shape is not None
    assert model.predict(unseen.shape) == pytest.approx(unseen.duration_s, rel=0.03)


def test_queued_trials_cost_their_shapes_not_the_mean_of_the_finished():
    finished = [_finished(128), _finished(128)]  # two cheap trials finished first
    shapes = [_finished(8).shape, _finished(128).shape]  # the space: half of them at 8
    remaining = search_remaining_s(finished, [], queued=2, queued_shapes=shapes)
    # one batch size seen: its step time stands for every batch size, so the steps of a
    # trial at 8 are counted 16x (their step time is not extrapolated without a second size)
    model = TrialCostModel.fit(finished)
    assert model is not None and model.power == 0.0
    expected = 2 * (model.predict(shapes[0]) + model.predict(shapes[1])) / 2
    assert remaining == pytest.approx(expected)
    mean_says = 2 * sum(t.duration_s for t in finished) / 2
    assert remaining > 2 * mean_says


def test_running_trials_step_times_inform_the_law():
    finished = [_finished(32)]
    running = [RunningTrial(2.0, 3.0, TrialShape(128, 20, 4), step_s=_law(128))]
    model = TrialCostModel.fit(finished, running)
    assert model is not None and model.power == pytest.approx(0.5)


def test_the_share_of_steps_trials_really_train_scales_the_prediction():
    model = TrialCostModel.fit([_finished(16, share=0.5), _finished(64, share=0.5)])
    assert model is not None and model.completion == pytest.approx(0.5, abs=0.01)
    full = _finished(32)
    half = _finished(32, share=0.5)
    assert full.shape is not None
    assert model.predict(full.shape) == pytest.approx(half.duration_s, rel=0.05)


def test_a_running_trial_without_eta_costs_its_prediction_minus_its_elapsed_time():
    finished = [_finished(8), _finished(128)]
    shape = TrialShape(32, 80, 4)
    model = TrialCostModel.fit(finished)
    assert model is not None
    remaining = search_remaining_s(finished, [RunningTrial(1.0, None, shape)], queued=0)
    assert remaining == pytest.approx(model.predict(shape) - 1.0)


def test_queued_trials_take_the_slot_that_frees_first():
    finished = [FinishedTrial(4.0)]
    running = [RunningTrial(0.0, 5.0), RunningTrial(0.0, 1.0)]
    # slots free at 1 and 5: the first queued runs 1..5, the second 5..9
    assert search_remaining_s(finished, running, queued=2, concurrency=2) == pytest.approx(9.0)
    assert search_remaining_s([FinishedTrial(12.0)], [], queued=4, concurrency=2) == 24.0
    assert search_remaining_s([FinishedTrial(12.0)], [], queued=4, concurrency=1) == 48.0


def test_more_trials_in_flight_than_slots_hold_the_queue_until_the_surplus_ends():
    running = [RunningTrial(0.0, 2.0), RunningTrial(0.0, 3.0), RunningTrial(0.0, 10.0)]
    # one slot: the queued trial starts when the last running one ends
    assert search_remaining_s([FinishedTrial(1.0)], running, queued=1) == pytest.approx(11.0)


def test_a_step_time_that_falls_with_the_batch_size_is_read_as_flat():
    small = FinishedTrial(10.0, TrialShape(8, 100, 2), 100, 0.05)
    large = FinishedTrial(3.0, TrialShape(128, 10, 2), 10, 0.01)
    model = TrialCostModel.fit([small, large])
    assert model is not None and model.power == 0.0
    assert model.step_s(8) == model.step_s(128)
