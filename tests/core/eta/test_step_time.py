import math
import random

import pytest

from ludwig_nb.core.eta.step_time import SelfCheck, StepRate


def _noisy(n: int, level: float, seed: int, sd: float = 0.05) -> list[float]:
    rng = random.Random(seed)
    return [level * math.exp(rng.gauss(0.0, sd)) for _ in range(n)]


def _fed(durations: list[float], prior: float | None = None) -> StepRate:
    rate = StepRate(prior)
    for d in durations:
        rate.add(d)
    return rate


def test_prior_then_provisional_then_stable():
    rate = StepRate(prior_s=0.7)
    assert rate.step_s() == 0.7
    assert rate.state == "warming_up"
    for d in [4.0, 1.0, 1.0]:
        rate.add(d)
    assert rate.step_s() == pytest.approx(1.0)  # median of the last steps, spike ignored
    for d in _noisy(100, 1.0, seed=1):
        rate.add(d)
    assert rate.state == "stable"
    assert rate.count == 103


def test_no_basis_without_prior():
    rate = _fed([3.0, 1.0])
    assert rate.step_s() is None


def test_known_regime_change_scales_until_data():
    rate = _fed(_noisy(200, 0.5, seed=2))
    before = rate.step_s()
    assert before is not None
    rate.new_regime(scale=2.0)
    assert rate.state == "adjusting"
    assert rate.step_s() == pytest.approx(2 * before)
    for d in _noisy(100, 0.8, seed=3):
        rate.add(d)
    assert rate.step_s() == pytest.approx(0.8, rel=0.05)


def test_throttling_ramp_is_cut_off():
    flat = _noisy(400, 1.0, seed=7, sd=0.03)
    ramp = [1.0 + 0.3 * i / 80 for i in range(80)]
    hot = _noisy(200, 1.3, seed=8, sd=0.03)
    rate = _fed(flat + ramp + hot)
    assert rate.step_s() == pytest.approx(1.3, rel=0.03)


def test_variance_grows_with_noise():
    quiet = _fed(_noisy(400, 1.0, seed=9, sd=0.01))
    loud = _fed(_noisy(400, 1.0, seed=9, sd=0.2))
    q_var, q_n, q_df = quiet.variance(1.0)
    l_var, _, _ = loud.variance(1.0)
    assert l_var > 50 * q_var
    assert q_df >= 4
    assert q_n > 300


def test_a_sustained_change_starts_a_regime_at_the_new_level():
    # Throttling that stays: a new regime, re-estimated from the change on.
    durations = _noisy(400, 1.0, seed=14, sd=0.03) + _noisy(400, 1.5, seed=15, sd=0.03)
    rate = _fed(durations)
    assert rate.state == "stable"
    assert rate.step_s() == pytest.approx(1.5, rel=0.03)


def test_steps_after_the_change_point_do_not_count_as_old_stragglers():
    # The alarm comes some steps after the change; those steps belong to the new regime,
    # not to the old one's straggler share (which would inflate the new level).
    durations = _noisy(400, 1.0, seed=20, sd=0.03) + _noisy(300, 2.0, seed=21, sd=0.03)
    rate = _fed(durations)
    assert rate.step_s() == pytest.approx(2.0, rel=0.015)


def test_level_error_is_about_zero_on_a_stationary_run():
    rate = _fed(_noisy(2000, 1.0, seed=11))
    var, _, _ = rate.variance(1.0)
    assert rate.level_error(var) < 0.01**2


def test_level_error_learns_that_the_level_wanders():
    # The level swings between 1.0 and 1.3 every 300 steps: the predictions made on one
    # level miss on the next, and the run's own record says so.
    durations: list[float] = []
    for k in range(8):
        durations += _noisy(300, 1.3 if k % 2 else 1.0, seed=20 + k, sd=0.03)
    rate = _fed(durations)
    var, _, _ = rate.variance(1.0)
    assert rate.level_error(var) > 0.05**2


def test_level_error_needs_three_judged_predictions():
    rate = _fed(_noisy(60, 1.0, seed=12))
    assert rate.level_error(0.0) == 0.0


def test_a_fresh_regime_takes_its_straggler_share_from_the_history():
    # Every 25th step is a 10x straggler: the mean is 1.36 medians. After a change to 2x,
    # the new regime has shown no straggler yet; its step time still carries the share.
    def run(level: float, n: int, seed: int, first_straggler: int) -> list[float]:
        steps = _noisy(n, level, seed=seed, sd=0.03)
        return [d * 10 if i >= first_straggler and i % 25 == 0 else d for i, d in enumerate(steps)]

    rate = _fed(
        run(1.0, 800, seed=24, first_straggler=0) + run(2.0, 150, seed=25, first_straggler=150)
    )
    assert rate.state == "stable"
    step = rate.step_s()
    assert step is not None
    assert step == pytest.approx(2.0 * 1.36, rel=0.08)


def test_a_level_that_wanders_is_not_taken_for_a_change():
    # Step times that wander (AR(1), phi 0.9) around one level: neighbouring blocks are
    # correlated, which the detector's spread allows for, so most runs stay one regime.
    def wandering(seed: int) -> list[float]:
        rng, ar, out = random.Random(seed), 0.0, []
        for _ in range(1500):
            ar = 0.9 * ar + rng.gauss(0.0, 0.03)
            out.append(math.exp(ar + rng.gauss(0.0, 0.02)))
        return out

    whole = [_fed(wandering(seed)).variance(1.0)[1] >= 1000 for seed in range(12)]
    assert sum(whole) >= 9


def test_a_detected_change_says_adjusting_once_it_is_known():
    # The alarm comes some steps after the change point it names; "adjusting" is shown
    # from then on for a while, not only for steps already past.
    rate = _fed(_noisy(400, 1.0, seed=26, sd=0.03))
    assert rate.state == "stable"
    states = []
    for d in _noisy(200, 1.15, seed=27, sd=0.05):
        rate.add(d)
        states.append(rate.state)
    first = states.index("adjusting")
    assert states[first : first + 20] == ["adjusting"] * 20
    assert states[-1] == "stable"


def _prefix(values: list[float]) -> list[float]:
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def test_predictions_that_missed_by_a_fifth_score_its_square():
    check = SelfCheck()
    for at in (20, 40, 60):
        assert check.due(at)
        check.record(at, 1.0)
    # From step 20 on every step took 1.2 s: each prediction missed by log(1.2).
    prefix = _prefix([1.0] * 20 + [1.2] * 100)
    error = check.level_error(prefix, (0,), var=0.0)
    assert error == pytest.approx(0.1823**2, rel=0.01)


def test_nothing_is_recorded_while_not_stable():
    check = SelfCheck()
    check.record(20, None)
    assert not check.due(21)
    assert check.level_error(_prefix([1.0] * 100), (0,), var=0.0) == 0.0


def _bursts(levels: list[float], n: int = 150) -> list[float]:
    out: list[float] = []
    for k, level in enumerate(levels):
        out += _noisy(n, level, seed=40 + k, sd=0.03)
    return out


def test_load_that_comes_and_goes_is_predicted_by_the_long_run_mean():
    # External load: the level swings 1 s -> 3 s -> 1 s -> 3 s. The current level says
    # little about the next 1000 steps; the mean since the first stable cut says more.
    rate = _fed(_bursts([1.0, 3.0, 1.0, 3.0, 1.0, 3.0]))
    level = rate.step_s()
    assert level == pytest.approx(3.0, rel=0.05)  # the regime's own level
    ahead = rate.step_s(steps_left=1000)
    assert ahead is not None
    assert 1.6 < ahead < 2.6  # pulled towards the long-run mean (~2 s)
    assert rate.step_s(steps_left=10) == pytest.approx(level, rel=0.1)  # a short horizon


def test_a_change_that_stays_keeps_its_level_over_any_horizon():
    rate = _fed(_bursts([1.0, 1.0, 3.0, 3.0]))
    assert rate.step_s(steps_left=1000) == pytest.approx(3.0, rel=0.05)


def test_a_long_run_holds_a_bounded_history_and_keeps_its_estimate(monkeypatch):
    from ludwig_nb.core.eta import constants

    monkeypatch.setattr(constants, "HISTORY_STEPS", 2048)
    durations = _noisy(30_000, 0.1, seed=5)
    bounded = _fed(durations)
    assert len(bounded._x) <= 2048 and len(bounded._cum) == len(bounded._x) + 1
    assert bounded.count == 30_000 and bounded.state == "stable"
    assert bounded.step_s() == pytest.approx(0.1, rel=0.02)
    var, _, df = bounded.variance(0.1)
    assert df > 3 and var > 0
    # a change after the history was forgotten is still found and followed
    for d in _noisy(2_000, 0.25, seed=6):
        bounded.add(d)
    assert bounded.step_s() == pytest.approx(0.25, rel=0.05)


def test_load_that_comes_and_goes_keeps_its_long_run_mean_past_the_bound(monkeypatch):
    from ludwig_nb.core.eta import constants

    swings = _bursts([1.0, 3.0, 1.0, 3.0, 1.0, 3.0], n=600)
    whole = _fed(swings).step_s(steps_left=1000)
    monkeypatch.setattr(constants, "HISTORY_STEPS", 1024)
    forgetting = _fed(swings)
    assert forgetting.count == len(swings) == 3600 and len(forgetting._x) <= 1024
    ahead = forgetting.step_s(steps_left=1000)
    assert ahead is not None and 1.6 < ahead < 2.6  # still between the levels
    assert ahead == pytest.approx(whole, rel=0.25)
