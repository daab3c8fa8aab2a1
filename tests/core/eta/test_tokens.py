import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludwig_nb.core.eta.step_time import StepRate
from ludwig_nb.core.eta.tokens import TokenPlan, TokenRate, fit_shape, huber_fit, huber_line


def _batches(n: int, seed: int, rows: int = 4) -> list[float]:
    """Padded tokens of ``n`` batches of ``rows`` rows with log-normal lengths (<= 512)."""
    rng = random.Random(seed)
    return [
        float(rows * max(min(512, int(math.exp(rng.gauss(4.6, 0.7)))) for _ in range(rows)))
        for _ in range(n)
    ]


def _times(tokens: list[float], a: float, b: float, seed: int, sd: float = 0.03) -> list[float]:
    rng = random.Random(seed)
    return [(a + b * t) * math.exp(rng.gauss(0.0, sd)) for t in tokens]


def test_huber_line_shrugs_off_stragglers():
    rng = random.Random(0)
    x = [rng.uniform(100, 2000) for _ in range(300)]
    y = [0.02 + 5e-5 * v + rng.gauss(0, 0.002) for v in x]
    for i in range(0, 300, 10):  # one step in ten stalls for 5x as long
        y[i] *= 5.0
    line = huber_line(x, y)
    assert line is not None
    a, b = line
    assert a == pytest.approx(0.02, abs=0.004)
    assert b == pytest.approx(5e-5, rel=0.05)
    plain_b = sum((xi - sum(x) / 300) * yi for xi, yi in zip(x, y, strict=True)) / sum(
        (xi - sum(x) / 300) ** 2 for xi in x
    )
    assert abs(plain_b / 5e-5 - 1) > 0.05  # least squares is pulled by the stalls


def test_huber_line_needs_spread_and_points():
    assert huber_line([5.0] * 8, [1.0, 2.0, 3.0, 4.0] * 2) is None
    assert huber_line([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) is None  # three points a coefficient
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert huber_line(x, [1.0 + 2.0 * v for v in x]) == pytest.approx((1.0, 2.0), abs=1e-9)


def test_huber_fit_finds_a_quadratic_term():
    x = [float(v) for v in range(1, 40)]
    y = [0.5 + 0.1 * v + 0.02 * v * v for v in x]
    fit = huber_fit([x, [v * v for v in x]], y)
    assert fit is not None
    assert fit[0] == pytest.approx([0.5, 0.1, 0.02], abs=1e-9)


def test_plan_sums_planned_steps_and_counts_the_rest_at_their_mean():
    plan = TokenPlan()
    assert plan.mean() is None
    assert not plan.planned
    plan.plan(0, [100, 200, 300])
    assert plan.planned
    assert plan.total(0, 3) == 600
    assert plan.total(1, 5) == 200 + 300 + 2 * 200  # steps 3 and 4 are not planned yet
    plan.plan(3, [1000])
    assert plan.mean() == pytest.approx(400.0)
    assert plan.at(3) == 1000
    assert plan.at(9) == pytest.approx(400.0)
    plan.plan(0, [50])  # a later plan for the same step replaces the earlier one
    assert plan.total(0, 1) == 50
    assert plan.total(5, 5) == 0.0


def test_plan_falls_back_on_the_steps_seen():
    plan = TokenPlan()
    plan.observe(10.0)
    plan.observe(30.0)
    assert plan.mean() == 20.0
    assert plan.total(0, 4) == 80.0


def test_share_is_fitted_from_the_step_times():
    tokens = _batches(600, seed=1)
    reference = sum(tokens) / len(tokens)
    a, b = 0.02, 5e-5
    rate = TokenRate(None, reference)
    for d, t in zip(_times(tokens, a, b, seed=2), tokens, strict=True):
        rate.add(d, t)
    assert rate.share == pytest.approx(b * reference / (a + b * reference), abs=0.03)
    assert rate.rebuilds >= 1
    level = rate.step_s()
    assert level is not None
    assert level * rate.weight(2000.0) == pytest.approx(a + b * 2000.0, rel=0.05)
    assert level * rate.weight(200.0) == pytest.approx(a + b * 200.0, rel=0.05)


def test_share_is_clamped_to_what_a_step_can_be():
    tokens = _batches(300, seed=3)
    rate = TokenRate(None, sum(tokens) / len(tokens))
    for t in tokens:  # time falls with tokens: the fit says tokens cost nothing
        rate.add(0.5 - 1e-4 * t, t)
    assert rate.share == 0.0
    quadratic = TokenRate(None, sum(tokens) / len(tokens))
    for t in tokens:  # a negative intercept: all of it is per token
        quadratic.add(1e-7 * t * t, t)
    assert quadratic.share == 1.0
    assert quadratic.weight(0.0) > 0


def test_equal_tokens_are_the_step_count_rate():
    rng = random.Random(4)
    durations = [5.0] + [0.3 * math.exp(rng.gauss(0, 0.05)) for _ in range(300)]
    plain, tokens = StepRate(), TokenRate(None, 512.0)
    for d in durations:
        plain.add(d)
        tokens.add(d, 512.0)
    assert tokens.share == 0.0
    assert tokens.rebuilds == 0
    assert tokens.step_s(100) == plain.step_s(100)
    assert tokens.state == plain.state == "stable"
    assert tokens.variance(0.3) == plain.variance(0.3)


def test_a_replay_keeps_the_known_regime_changes():
    """A known change at step 10 (a throttle's duty, here with no effect on pace) starts
    a segment; the replays that the share's fits cause later keep it."""
    tokens = _batches(300, seed=5)
    rate = TokenRate(None, sum(tokens) / len(tokens))
    times = _times(tokens, 0.01, 1e-4, seed=6)
    for i, (d, t) in enumerate(zip(times, tokens, strict=True)):
        if i == 10:
            rate.new_regime(scale=1.0)
        rate.add(d, t)
    assert rate.rebuilds >= 1
    span = rate.stable_span
    assert span is not None
    assert span[0] >= 10


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=4096), min_size=1, max_size=120),
    st.floats(min_value=0.0, max_value=0.05),
)
def test_weights_stay_positive_and_the_level_finite(tokens, noise):
    rng = random.Random(len(tokens))
    rate = TokenRate(None, sum(tokens) / len(tokens))
    for t in tokens:
        rate.add((0.01 + 1e-5 * t) * math.exp(rng.gauss(0, noise)), float(t))
    assert 0.0 <= rate.share <= 1.0
    assert all(rate.weight(float(t)) > 0 for t in (0, 1, *tokens))
    level = rate.step_s()
    assert level is None or (math.isfinite(level) and level > 0)


def test_the_quadratic_term_only_where_the_steps_show_it():
    rng = random.Random(11)
    tokens = _batches(400, seed=12)
    reference = sum(tokens) / len(tokens)
    linear = [(0.02 + 4e-5 * t) * math.exp(rng.gauss(0, 0.02)) for t in tokens]
    curved = [(0.02 + 2e-5 * t + 2e-8 * t * t) * math.exp(rng.gauss(0, 0.02)) for t in tokens]
    assert fit_shape(tokens, linear, reference).quadratic == 0.0
    shape = fit_shape(tokens, curved, reference)
    assert shape.quadratic > 0.05
    for t in (200.0, 2000.0):  # the fitted shape prices short and long batches alike
        expected = (0.02 + 2e-5 * t + 2e-8 * t * t) / (
            0.02 + 2e-5 * reference + 2e-8 * reference**2
        )
        assert shape.weight(t / reference) == pytest.approx(expected, rel=0.06)


def test_an_estimate_sums_squares_where_attention_grows_quadratically():
    from ludwig_nb.core.eta.estimator import EtaEstimator
    from ludwig_nb.core.eta.plan import Schedule

    rng = random.Random(13)
    tokens = _batches(600, seed=14)
    tokens[400:] = sorted(tokens[400:])  # the longest batches come last
    seconds = [(0.01 + 1e-5 * t + 1e-7 * t * t) * math.exp(rng.gauss(0, 0.02)) for t in tokens]
    est = EtaEstimator(Schedule(total_steps=600), start_time=0.0)
    est.plan_tokens(0, tokens)
    now = 0.0
    for i in range(400):
        now += seconds[i]
        est.step_finished(i, now, tokens[i])
    e = est.estimate(now)
    assert e is not None
    # a straight line through the same steps is 9 % short: the long batches cost more
    assert e.remaining_s == pytest.approx(sum(seconds[400:]), rel=0.02)
