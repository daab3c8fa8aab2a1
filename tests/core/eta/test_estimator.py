import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludwig_nb.core.eta.estimator import EtaEstimator, half_width
from ludwig_nb.core.eta.event_costs import Cost
from ludwig_nb.core.eta.plan import Costs, Schedule


def _noisy(n: int, level: float, seed: int = 0, sd: float = 0.05) -> list[float]:
    rng = random.Random(seed)
    return [level * math.exp(rng.gauss(0.0, sd)) for _ in range(n)]


def _feed(est: EtaEstimator, durations: list[float], t: float, first: int = 0) -> float:
    """Steps ``first``, ``first+1``, ... with the given durations; returns the end time."""
    for i, d in enumerate(durations):
        t += d
        est.step_finished(first + i, t)
    return t


def test_none_before_any_basis_then_provisional():
    est = EtaEstimator(Schedule(total_steps=100), start_time=0.0)
    assert est.estimate(0.0) is None
    t = _feed(est, [5.0, 1.0], 0.0)
    assert est.estimate(t) is None  # two steps, one a compile spike: no basis yet
    t = _feed(est, [1.0], t, first=2)
    e = est.estimate(t)
    assert e is not None
    assert e.state == "warming_up"
    assert e.remaining_s == pytest.approx(97 * 1.0, rel=0.01)


def test_prior_gives_a_number_before_the_first_step():
    est = EtaEstimator(Schedule(total_steps=10), start_time=0.0, priors=Costs(step_s=2.0))
    e = est.estimate(0.0)
    assert e is not None
    assert e.remaining_s == pytest.approx(20.0)


def test_warm_up_detected_then_stable_at_the_plateau():
    ramp = [10.0] + [1.0 + 2.0 * math.exp(-i / 5.0) for i in range(1, 30)]
    est = EtaEstimator(Schedule(total_steps=1000), start_time=0.0)
    t = _feed(est, ramp[:12], 0.0)
    early = est.estimate(t)
    assert early is not None
    assert early.state == "warming_up"
    t = _feed(est, ramp[12:] + _noisy(170, 1.0), t, first=12)
    e = est.estimate(t)
    assert e is not None
    assert e.state == "stable"
    assert e.step_s == pytest.approx(1.0, rel=0.03)  # the ramp is not averaged in
    assert e.remaining_s == pytest.approx(800 * 1.0, rel=0.03)


def test_stragglers_do_not_swing_the_estimate():
    est = EtaEstimator(Schedule(total_steps=2000), start_time=0.0)
    t = _feed(est, _noisy(300, 0.5, seed=1), 0.0)
    before = est.estimate(t)
    t = _feed(est, [2.5, 0.5, 0.5, 2.5, 50.0], t, first=300)  # two 5x and a 100x stall
    after = est.estimate(t)
    assert before is not None
    assert after is not None
    assert after.state == "stable"
    assert after.step_s == pytest.approx(before.step_s, rel=0.10)
    # a last-step rate would have multiplied the estimate by 100
    assert after.remaining_s < 1.15 * before.remaining_s


def test_evaluation_cost_is_learned_excluding_the_first():
    sched = Schedule(total_steps=500, evaluations_after=tuple(range(49, 500, 50)))
    est = EtaEstimator(sched, start_time=0.0)
    t = 0.0
    costs = iter([30.0, 10.0, 11.0])
    for block in range(3):
        t = _feed(est, _noisy(50, 0.2, seed=block), t, first=50 * block)
        cost = next(costs)
        est.interval_finished("evaluation", t, t + cost)
        t += cost
    e = est.estimate(t)
    assert e is not None
    assert e.breakdown["evaluations"] == pytest.approx(7 * 10.5)  # the 30 s one is out


def test_first_evaluation_alone_meets_the_prior_half_way():
    sched = Schedule(total_steps=300, evaluations_after=(99, 199, 299), evaluation_batches=100)
    est = EtaEstimator(sched, start_time=0.0)
    t = _feed(est, [0.2] * 100, 0.0)
    prior_only = est.estimate(t)
    assert prior_only is not None
    # pending evaluation after step 99 plus two more, each 100 batches * 0.35 * 0.2 s
    assert prior_only.breakdown["evaluations"] == pytest.approx(3 * 7.0, rel=0.01)
    est.interval_finished("evaluation", t, t + 28.0)
    e = est.estimate(t + 28.0)
    assert e is not None
    assert e.breakdown["evaluations"] == pytest.approx(2 * math.sqrt(7.0 * 28.0), rel=0.01)


def test_pending_evaluation_counts_until_it_is_done():
    sched = Schedule(total_steps=100, evaluations_after=(49, 99))
    est = EtaEstimator(sched, start_time=0.0, priors=Costs(evaluation_s=5.0))
    t = _feed(est, [0.1] * 50, 0.0)
    e = est.estimate(t)
    assert e is not None
    assert e.breakdown["evaluations"] == pytest.approx(10.0)
    est.interval_finished("evaluation", t, t + 5.0)
    e = est.estimate(t + 5.0)
    assert e is not None
    assert e.breakdown["evaluations"] == pytest.approx(5.0)


def test_epoch_starts_are_their_own_class():
    sched = Schedule(total_steps=400, epoch_starts=(0, 100, 200, 300))
    est = EtaEstimator(sched, start_time=0.0)
    t = 0.0
    for epoch in range(3):
        durations = _noisy(100, 0.1, seed=epoch)
        if epoch:
            durations[0] = 3.0  # workers restart
        t = _feed(est, durations, t, first=100 * epoch)
    e = est.estimate(t)
    assert e is not None
    assert e.step_s == pytest.approx(0.1, rel=0.05)  # slow epoch starts not in the rate
    assert e.breakdown["epoch_starts"] == pytest.approx(3.0, rel=0.01)
    assert e.breakdown["steps"] == pytest.approx(99 * e.step_s)


def test_regime_change_adjusts_then_re_estimates():
    est = EtaEstimator(Schedule(total_steps=3000), start_time=0.0)
    t = _feed(est, _noisy(600, 1.0, seed=2), 0.0)
    assert est.state == "stable"
    states = []
    slow = _noisy(400, 1.5, seed=3)
    for i, d in enumerate(slow):
        t += d
        est.step_finished(600 + i, t)
        states.append(est.state)
    assert "adjusting" in states[:80]  # detected within 80 steps
    assert states[-1] == "stable"
    e = est.estimate(t)
    assert e is not None
    assert e.step_s == pytest.approx(1.5, rel=0.03)
    assert e.remaining_s == pytest.approx(2000 * 1.5, rel=0.03)


def test_pause_is_excluded_and_not_extrapolated():
    sched = Schedule(total_steps=1000)
    with_pause = EtaEstimator(sched, start_time=0.0)
    without = EtaEstimator(sched, start_time=0.0)
    durations = _noisy(200, 0.3, seed=4)
    t1 = _feed(with_pause, durations[:100], 0.0)
    with_pause.interval_finished("pause", t1, t1 + 1000.0)
    t1 = _feed(with_pause, durations[100:], t1 + 1000.0, first=100)
    t2 = _feed(without, durations, 0.0)
    a, b = with_pause.estimate(t1), without.estimate(t2)
    assert a is not None
    assert b is not None
    assert a.remaining_s == pytest.approx(b.remaining_s)
    assert a.step_s == pytest.approx(0.3, rel=0.05)


def test_set_schedule_keeps_the_rate():
    est = EtaEstimator(Schedule(total_steps=1000, batch_size=32), start_time=0.0)
    t = _feed(est, _noisy(200, 0.5, seed=5), 0.0)
    before = est.estimate(t)
    est.set_schedule(Schedule(total_steps=600, batch_size=32))
    after = est.estimate(t)
    assert before is not None
    assert after is not None
    assert after.step_s == before.step_s
    assert after.state == "stable"
    assert after.remaining_s == pytest.approx(400 * before.step_s)


def test_batch_size_change_starts_a_scaled_regime():
    est = EtaEstimator(Schedule(total_steps=1000, batch_size=32), start_time=0.0)
    t = _feed(est, _noisy(200, 0.5, seed=6), 0.0)
    old = est.estimate(t)
    est.set_schedule(Schedule(total_steps=600, batch_size=64))
    e = est.estimate(t)
    assert old is not None
    assert e is not None
    assert e.state == "adjusting"
    assert e.step_s == pytest.approx(2 * old.step_s)
    t = _feed(est, _noisy(100, 0.9, seed=7), t, first=200)
    e = est.estimate(t)
    assert e is not None
    assert e.step_s == pytest.approx(0.9, rel=0.05)


def test_time_inside_a_step_counts_up_to_one_step():
    est = EtaEstimator(Schedule(total_steps=100), start_time=0.0)
    t = _feed(est, [1.0] * 50, 0.0)
    at_end = est.estimate(t)
    half_way = est.estimate(t + 0.5)
    stuck = est.estimate(t + 100.0)
    assert at_end is not None
    assert half_way is not None
    assert stuck is not None
    assert half_way.remaining_s == pytest.approx(at_end.remaining_s - 0.5)
    assert stuck.remaining_s == pytest.approx(at_end.remaining_s - 1.0)
    assert half_way.finish_time == pytest.approx(t + 0.5 + half_way.remaining_s)


def test_finished_schedule_has_nothing_left():
    est = EtaEstimator(Schedule(total_steps=10), start_time=0.0)
    t = _feed(est, [1.0] * 10, 0.0)
    e = est.estimate(t)
    assert e is not None
    assert e.remaining_s == 0.0
    assert e.low_s == 0.0
    assert e.high_s == 0.0


def test_bad_input_is_rejected():
    est = EtaEstimator(Schedule(total_steps=10), start_time=0.0)
    est.step_finished(3, 1.0)
    with pytest.raises(ValueError, match="not after step 3"):
        est.step_finished(3, 2.0)
    with pytest.raises(ValueError, match="unknown interval kind"):
        est.interval_finished("lunch", 2.0, 3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="total_steps"):
        Schedule(total_steps=-1)
    with pytest.raises(ValueError, match="not a finite number"):
        est.step_finished(4, float("nan"))
    with pytest.raises(ValueError, match="not finite"):
        est.interval_finished("pause", 2.0, float("inf"))


def test_schedule_sorts_and_deduplicates():
    s = Schedule(total_steps=10, evaluations_after=(9, 4, 4))
    assert s.evaluations_after == (4, 9)


def test_predict_total_sums_the_plan():
    sched = Schedule(
        total_steps=1000,
        epoch_starts=(0, 500),
        evaluations_after=(499, 999),
        checkpoints_after=(499, 999),
    )
    costs = Costs(step_s=0.2, evaluation_s=10.0, checkpoint_s=2.0, epoch_start_s=1.0)
    e = EtaEstimator.predict_total(sched, costs, warmup_s=5.0)
    assert e.remaining_s == pytest.approx(998 * 0.2 + 2 * 1.0 + 2 * 10.0 + 2 * 2.0 + 5.0)
    assert e.breakdown["evaluations"] == pytest.approx(20.0)
    assert e.low_s < e.remaining_s < e.high_s
    with pytest.raises(ValueError, match="step_s"):
        EtaEstimator.predict_total(sched, Costs())


def test_interval_is_wider_while_warming_up():
    est = EtaEstimator(Schedule(total_steps=1000), start_time=0.0)
    t = _feed(est, _noisy(10, 1.0, seed=8), 0.0)
    early = est.estimate(t)
    t = _feed(est, _noisy(300, 1.0, seed=9), t, first=10)
    late = est.estimate(t)
    assert early is not None
    assert late is not None
    assert (early.high_s - early.low_s) / early.remaining_s > (
        late.high_s - late.low_s
    ) / late.remaining_s


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("step"), st.floats(0.0, 50.0)),
        st.tuples(st.sampled_from(["evaluation", "checkpoint", "pause"]), st.floats(0.0, 100.0)),
        st.tuples(st.just("ask"), st.floats(0.0, 200.0)),
    ),
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(
    ops=_ops,
    total=st.integers(0, 200),
    every=st.integers(1, 40),
)
def test_estimate_is_never_negative_and_ordered(ops, total, every):
    sched = Schedule(
        total_steps=total,
        epoch_starts=tuple(range(0, total, every)),
        evaluations_after=tuple(range(every - 1, total, every)),
        checkpoints_after=tuple(range(every - 1, total, 2 * every)),
    )
    est = EtaEstimator(sched, start_time=0.0)
    t, step = 0.0, 0
    for kind, value in ops:
        if kind == "step":
            t += value
            est.step_finished(step, t)
            step += 1
        elif kind == "ask":
            e = est.estimate(t + value)
            if e is not None:
                assert 0.0 <= e.low_s <= e.remaining_s <= e.high_s
                assert math.isfinite(e.high_s)
        else:
            est.interval_finished(kind, t, t + value)
            t += value


def test_interval_widens_when_the_run_has_missed_before():
    # Both runs end with 1500 steps at the same level. One of them was 30 % faster
    # before that: its earlier predictions missed, and its interval says so.
    def width(changed: bool) -> float:
        rng = random.Random(5)
        est = EtaEstimator(Schedule(total_steps=6000), start_time=0.0)
        t = 0.0
        for i in range(3000):
            level = 1.0 if changed and i < 1500 else 1.3
            t += level * math.exp(rng.gauss(0.0, 0.03))
            est.step_finished(i, t)
        e = est.estimate(t)
        assert e is not None and e.state == "stable"
        return (e.high_s - e.low_s) / e.remaining_s

    assert width(changed=True) > 2 * width(changed=False)


def _width(**changes: object) -> float:
    args: dict[str, object] = {
        "remaining_s": 100.0,
        "steps_left": 100,
        "steps_s": 100.0,
        "step_noise": (0.01, 400.0, 30),
        "events": [(2, Cost(5.0, 0.5, 3))],
        "level_error": 0.0,
    }
    args.update(changes)
    return half_width(**args)  # type: ignore[arg-type]


def test_every_source_of_doubt_widens_the_interval():
    base = _width()
    assert base > 0
    assert _width(step_noise=(0.04, 400.0, 30)) > base
    assert _width(events=[(2, Cost(5.0, 2.0, 3))]) > base
    assert _width(level_error=0.01) > base
    assert _width(step_noise=(0.01, 400.0, 3)) > base  # few batches: a wider t


def test_nothing_left_has_no_width():
    assert _width(remaining_s=0.0) == 0.0


def _lengths_run(
    tokens: list[float], a: float, b: float, seed: int = 0
) -> tuple[list[float], float]:
    """Step end times of a run whose step ``i`` takes ``a + b x tokens[i]`` (3 % noise)."""
    rng = random.Random(seed)
    t, ends = 0.0, []
    for i, n in enumerate(tokens):
        d = (a + b * n) * math.exp(rng.gauss(0.0, 0.03)) * (5.0 if i == 0 else 1.0)
        t += d
        ends.append(t)
    return ends, t


def test_steps_are_costed_by_their_planned_tokens():
    """The second half of the run computes 4x the tokens per step (longer rows): counting
    steps extrapolates the short ones; summing the planned tokens does not."""
    rng = random.Random(1)
    tokens = [rng.uniform(200, 600) for _ in range(300)] + [
        rng.uniform(1400, 2000) for _ in range(300)
    ]
    ends, end = _lengths_run(tokens, 0.02, 5e-5)
    plain = EtaEstimator(Schedule(total_steps=600), start_time=0.0)
    aware = EtaEstimator(Schedule(total_steps=600), start_time=0.0)
    aware.plan_tokens(0, tokens)
    for i in range(200):
        plain.step_finished(i, ends[i])
        aware.step_finished(i, ends[i], tokens[i])
    truth = end - ends[199]
    p, a = plain.estimate(ends[199]), aware.estimate(ends[199])
    assert p is not None
    assert a is not None
    assert abs(a.remaining_s / truth - 1) < 0.05
    assert p.remaining_s < 0.7 * truth
    assert a.step_s > p.step_s  # the mean of the steps left, which are longer


def test_equal_tokens_give_the_step_count_estimate():
    durations = _noisy(300, 0.4, seed=2)
    plain = EtaEstimator(Schedule(total_steps=500, evaluations_after=(249, 499)), 0.0)
    aware = EtaEstimator(Schedule(total_steps=500, evaluations_after=(249, 499)), 0.0)
    aware.plan_tokens(0, [256] * 500)
    t = 0.0
    for i, d in enumerate(durations):
        t += d
        plain.step_finished(i, t)
        aware.step_finished(i, t, 256)
        if i == 249:
            plain.interval_finished("evaluation", t, t + 3.0)
            aware.interval_finished("evaluation", t, t + 3.0)
            t += 3.0
    p, a = plain.estimate(t + 0.1), aware.estimate(t + 0.1)
    assert p is not None
    assert a is not None
    assert a.remaining_s == pytest.approx(p.remaining_s, rel=1e-12)
    assert (a.low_s, a.high_s) == pytest.approx((p.low_s, p.high_s), rel=1e-12)


def test_unplanned_steps_count_the_mean_of_those_seen():
    tokens = [100.0, 300.0] * 100
    ends, _ = _lengths_run(tokens, 0.0, 1e-3)
    est = EtaEstimator(Schedule(total_steps=400), start_time=0.0)
    for i in range(200):
        est.step_finished(i, ends[i], tokens[i])
    e = est.estimate(ends[199])
    assert e is not None
    assert e.remaining_s == pytest.approx(200 * 0.2, rel=0.05)  # 200 steps of 200 tokens


def test_a_planned_step_in_progress_counts_its_own_tokens():
    tokens = [250.0, 750.0] * 50 + [5000.0]
    ends, _ = _lengths_run(tokens, 0.0, 1e-3)
    est = EtaEstimator(Schedule(total_steps=101), start_time=0.0)
    est.plan_tokens(0, tokens)
    for i in range(100):
        est.step_finished(i, ends[i], tokens[i])
    # 2 s into the last, 10x longer step: 3 s of its ~5 s are left, not none of them
    e = est.estimate(ends[99] + 2.0)
    assert e is not None
    assert e.remaining_s == pytest.approx(3.0, rel=0.15)


def test_a_pilots_token_model_prices_a_whole_run():
    """``predict_total`` with a pilot's token model: steps priced by their planned tokens."""
    costs = Costs(step_s=0.5, token_reference=1000.0, token_share=0.8)
    tokens = [500.0] * 50 + [2000.0] * 50
    e = EtaEstimator.predict_total(Schedule(total_steps=100), costs, step_tokens=tokens)
    per_step = [0.5 * (0.2 + 0.8 * t / 1000.0) for t in tokens]  # 0.3 s and 0.9 s
    assert e.breakdown["steps"] == pytest.approx(sum(per_step), rel=1e-9)
    assert e.remaining_s == pytest.approx(50 * 0.3 + 50 * 0.9, rel=1e-9)
    plain = EtaEstimator.predict_total(Schedule(total_steps=100), Costs(step_s=0.5))
    assert plain.remaining_s == pytest.approx(50.0)


def test_the_token_model_is_readable_once_fitted():
    rng = random.Random(3)
    tokens = [rng.uniform(100, 1500) for _ in range(300)]
    ends, _ = _lengths_run(tokens, 0.01, 1e-4)
    est = EtaEstimator(Schedule(total_steps=300), start_time=0.0)
    assert est.token_model is None
    est.plan_tokens(0, tokens)
    for i in range(200):
        est.step_finished(i, ends[i], tokens[i])
    model = est.token_model
    assert model is not None
    level, shape, reference = model
    assert reference == pytest.approx(sum(tokens) / 300)
    assert level * shape.weight(1500 / reference) == pytest.approx(0.16, rel=0.06)
    plain = EtaEstimator(Schedule(total_steps=300), start_time=0.0)
    plain.step_finished(0, 1.0)
    assert plain.token_model is None
