"""Which steps a long run keeps: all up to twice the budget, then a stride that bounds them."""

import pytest

from ludwig_nb.core.step_thinning import STEP_BUDGET, keeps_step, stride_at


def test_every_step_below_twice_the_budget_is_kept_then_the_stride_grows_as_a_square():
    assert all(keeps_step(s, 1000) for s in range(2000))
    assert [stride_at(s, 1000) for s in (1999, 2000, 3000, 10_000, 100_000)] == [
        1,
        4,
        16,
        128,
        16_384,
    ]
    assert keeps_step(2004, 1000) and not keeps_step(2005, 1000)


@pytest.mark.parametrize("steps", [10**4, 10**5, 10**6, 10**7])
def test_however_long_the_run_it_keeps_fewer_than_2_7_budgets(steps):
    budget = 1000
    kept = sum(1 for s in range(min(steps, 10**6)) if keeps_step(s, budget))
    if steps > 10**6:  # count the rest by stretches of one stride each
        for lo in range(10**6, steps, budget):
            stride = stride_at(lo, budget)
            kept += (lo + budget - 1) // stride - (lo - 1) // stride
    assert kept < 2.7 * budget


def test_the_default_budget_keeps_a_day_of_fast_steps_whole():
    assert STEP_BUDGET == 100_000 and all(keeps_step(s) for s in (0, 150_000, 199_999))
