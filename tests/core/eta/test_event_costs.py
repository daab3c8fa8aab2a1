import pytest

from ludwig_nb.core.eta.event_costs import EventCosts, is_pending, occurrences_left
from ludwig_nb.core.eta.plan import Costs


def test_the_median_of_the_last_three_without_the_first():
    costs = EventCosts(Costs())
    for seconds in (30.0, 10.0, 12.0, 11.0, 50.0):
        costs.add("evaluation", seconds)
    cost = costs.cost("evaluation", 1.0, 0)
    assert cost.value == 12.0  # median of 12, 11, 50; the slow first one is out
    assert cost.n == 3


def test_before_any_occurrence_the_prior_stands_in():
    costs = EventCosts(Costs(checkpoint_s=4.0))
    assert costs.cost("evaluation", 2.0, 10).value == pytest.approx(10 * 0.35 * 2.0)
    assert costs.cost("checkpoint", 2.0, 0).value == 4.0
    assert costs.cost("epoch_start", 2.0, 0).value == 2.0


def test_occurrences_left_count_a_pending_one():
    after = (9, 19, 29)
    assert occurrences_left(after, 30, last_step=5, done=-2) == 3
    assert is_pending(after, 9, done=-2)
    assert occurrences_left(after, 30, last_step=9, done=-2) == 3  # 9's is still to run
    assert occurrences_left(after, 30, last_step=9, done=9) == 2
