import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.eta.plan import Costs
from ludwig_nb.core.eta.tracker import EtaTracker, schedule_from_info

T0 = 1_800_000_000.0
INFO = ev.ScheduleInfo(
    total_steps=400,
    steps_per_epoch=100,
    epochs=4,
    epoch_starts=(0, 100, 200, 300),
    evaluations_after=(99, 199, 299, 399),
    checkpoints_after=(199, 399),
    batch_size=16,
    evaluation_batches=20,
)


def _run(steps: int, step_s: float = 0.5) -> list[ev.Event]:
    """A run of ``steps`` steps with its evaluations and checkpoints, on wall time."""
    out: list[ev.Event] = [ev.RunStarted(T0, "r1", "r", "builtin", "cpu", INFO)]
    t = T0
    for i in range(steps):
        d = 5.0 if i == 0 else step_s
        out.append(ev.StepFinished(t + d, i, i // 100, t, 16, 1.0))
        t += d
        if i in INFO.evaluations_after:
            cost = 12.0 if i == 99 else 4.0
            out.append(ev.EvaluationFinished(t + cost, i, i // 100, t, {}))
            t += cost
        if i in INFO.checkpoints_after:
            out.append(ev.CheckpointSaved(t + 1.0, i, t, "ckpt"))
            t += 1.0
    return out


def test_schedule_from_info_copies_the_plan():
    s = schedule_from_info(INFO)
    assert s.total_steps == 400
    assert s.evaluations_after == INFO.evaluations_after
    assert s.evaluation_batches == 20
    assert s.batch_size == 16


def test_tracker_follows_a_run():
    tracker = EtaTracker()
    events = _run(250)
    for e in events:
        tracker.observe(e)
    now = events[-1].time
    est = tracker.estimate(now)
    assert est is not None
    assert est.state == "stable"
    assert est.step_s == pytest.approx(0.5, rel=0.01)
    # 150 steps (one an epoch start), evaluations after 299 and 399 (4 s each once the
    # first is excluded), one checkpoint after 399
    assert est.breakdown["evaluations"] == pytest.approx(2 * 4.0)
    assert est.breakdown["checkpoints"] == pytest.approx(1.0)
    assert est.remaining_s == pytest.approx(150 * 0.5 + 8.0 + 1.0, rel=0.01)


def test_first_stable_estimate_is_kept():
    tracker = EtaTracker()
    for e in _run(300):
        tracker.observe(e)
    first = tracker.first_estimate
    assert first is not None
    assert first.state == "stable"
    assert tracker.first_total_s == pytest.approx(first.finish_time - T0)
    later = _run(301)[-1]
    tracker.observe(later)
    assert tracker.first_estimate is first


def test_pause_freezes_then_is_excluded():
    tracker = EtaTracker()
    events = _run(150)
    for e in events:
        tracker.observe(e)
    t = events[-1].time
    before = tracker.estimate(t)
    tracker.observe(ev.Paused(t, 150))
    during = tracker.estimate(t + 600.0)
    assert before is not None
    assert during is not None
    assert during.remaining_s == pytest.approx(before.remaining_s)
    assert during.at == t + 600.0
    tracker.observe(ev.Resumed(t + 900.0, 150, paused_at=t))
    tracker.observe(ev.StepFinished(t + 900.5, 150, 1, t + 900.0, 16, 1.0))
    after = tracker.estimate(t + 900.5)
    assert after is not None
    assert after.step_s == pytest.approx(0.5, rel=0.01)
    assert after.remaining_s == pytest.approx(before.remaining_s - 0.5, rel=0.01)


def test_schedule_change_and_finish():
    tracker = EtaTracker()
    events = _run(150)
    for e in events:
        tracker.observe(e)
    t = events[-1].time
    shorter = ev.ScheduleInfo(
        total_steps=200,
        steps_per_epoch=100,
        epochs=2,
        epoch_starts=(0, 100),
        evaluations_after=(99, 199),
        batch_size=16,
    )
    tracker.observe(ev.ScheduleChanged(t, shorter, reason="early stopping"))
    est = tracker.estimate(t)
    assert est is not None
    # one evaluation seen (12 s) and no prior in the new plan: it is taken as it is
    assert est.remaining_s == pytest.approx(50 * 0.5 + 12.0, rel=0.01)
    tracker.observe(ev.RunFinished(t + 1.0, "completed", 200))
    assert tracker.finished
    assert tracker.estimate(t + 2.0) is None


def test_odd_streams_are_ignored():
    tracker = EtaTracker(priors=Costs(step_s=0.5))
    tracker.observe(ev.StepFinished(T0, 0, 0, T0, 16, 1.0))  # before RunStarted
    assert tracker.estimate(T0) is None
    tracker.observe(ev.RunStarted(T0, "r1", "r", "builtin", "cpu", INFO))
    seeded = tracker.estimate(T0)
    assert seeded is not None  # the pilot's step time gives a number at once
    tracker.observe(ev.StepFinished(T0 + 1.0, 0, 0, T0, 16, 1.0))
    tracker.observe(ev.StepFinished(T0 + 2.0, 0, 0, T0 + 1.0, 16, 1.0))  # duplicate
    assert tracker.estimator is not None
    assert tracker.estimator.steps_done == 1
    tracker.observe(ev.StepFinished(float("nan"), 1, 0, T0 + 1.0, 16, 1.0))  # ignored
    assert tracker.estimator.steps_done == 1


def test_throttle_starts_a_regime_scaled_by_the_duty():
    """Throttled to half duty: steps take twice as long, and the ETA says so at once."""
    events = _run(60)  # stable at 0.5 s a step
    tracker = EtaTracker()
    for e in events:
        tracker.observe(e)
    now = events[-1].time
    before = tracker.estimate(now)
    assert before is not None and before.step_s == pytest.approx(0.5, rel=0.05)
    tracker.observe(
        ev.Throttled(
            now, duty=0.5, reason="alarm:t", device=0, metric="temperature", value=82, target=82
        )
    )
    after = tracker.estimate(now)
    assert after is not None and after.step_s == pytest.approx(1.0, rel=0.05)
    assert after.remaining_s > 1.5 * before.remaining_s
    tracker.observe(ev.Throttled(now, duty=1.0, reason="released"))
    released = tracker.estimate(now)
    assert released is not None and released.step_s == pytest.approx(0.5, rel=0.05)


def test_a_gpu_slowdown_starts_a_regime_scaled_by_the_clock_ratio():
    """The GPU's clocks fell to 80 %: steps take 1.25 times as long until new steps say more."""
    events = _run(60)
    tracker = EtaTracker()
    for e in events:
        tracker.observe(e)
    now = events[-1].time
    slowed = ev.GpuSlowdown(now, device=0, active=True, share=0.6, clock_ratio=0.8)
    tracker.observe(slowed)
    after = tracker.estimate(now)
    assert after is not None and after.step_s == pytest.approx(0.625, rel=0.05)
    tracker.observe(ev.GpuSlowdown(now, device=0, active=False, share=0.0, clock_ratio=1.25))
    back = tracker.estimate(now)
    assert back is not None and back.step_s == pytest.approx(0.5, rel=0.05)
    # an unknown ratio still restarts the regime, without a guess: the last steps speak
    tracker.observe(ev.GpuSlowdown(now, device=0, active=True, share=0.5, clock_ratio=None))
    unknown = tracker.estimate(now)
    assert unknown is not None and unknown.state == "adjusting"


def test_tracker_costs_language_model_steps_by_their_tokens():
    """Steps with padded tokens and an epoch plan: the plan sent before the run started
    counts too, and the last epoch's longer batches are foreseen."""
    info = ev.ScheduleInfo(total_steps=300, steps_per_epoch=100, epochs=3, batch_size=4)
    tokens = [200, 600] * 100 + [1600] * 100
    events: list[ev.Event] = [
        ev.EpochPlanned(T0, epoch=0, first_step=0, padded_tokens=tuple(tokens[:100])),
        ev.RunStarted(T0, "r1", "r", "builtin", "cpu", info),
        ev.EpochPlanned(T0, epoch=1, first_step=100, padded_tokens=tuple(tokens[100:200])),
        ev.EpochPlanned(T0, epoch=2, first_step=200, padded_tokens=tuple(tokens[200:])),
    ]
    t = T0
    for i in range(150):
        d = (0.05 + 1e-4 * tokens[i]) * (1.01 if i % 3 else 1.0)
        events.append(
            ev.StepFinished(t + d, i, i // 100, t, 4, 1.0, tokens=300, padded_tokens=tokens[i])
        )
        t += d
    tracker = EtaTracker()
    for e in events:
        tracker.observe(e)
    est = tracker.estimate(t)
    assert est is not None
    # 50 steps of 400 tokens on average and 100 of 1600 at 0.05 s + 0.1 ms per token
    # (two steps in three 1 % slower: all the timing varies)
    expected = 50 * (0.05 + 0.04) + 100 * (0.05 + 0.16)
    assert est.remaining_s == pytest.approx(expected, rel=0.05)
