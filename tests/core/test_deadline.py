"""Deadlines: parsing, the outlook against the ETA's interval, and when actions fire."""

from __future__ import annotations

import datetime as dt

import pytest

from ludwig_nb.core.deadline import (
    Deadline,
    DeadlinePolicy,
    Lead,
    outlook,
    parse_deadline,
    parse_duration,
)
from ludwig_nb.core.eta.plan import Estimate

UTC = dt.timezone.utc
NOON = dt.datetime(2026, 8, 12, 12, 0, tzinfo=UTC).timestamp()


def estimate(
    remaining: float, low: float, high: float, at: float = NOON, step: float = 0.5
) -> Estimate:
    return Estimate(remaining, low, high, "stable", at, step)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2h", 7200.0), ("90min", 5400.0), ("1h30m", 5400.0), ("1 h 30 min", 5400.0), ("45s", 45.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
    assert parse_deadline(text).resolve(NOON) == NOON + seconds


def test_clock_times_are_today_or_tomorrow_in_the_given_zone() -> None:
    assert parse_deadline("18:30").resolve(NOON, UTC) == NOON + 6.5 * 3600
    assert parse_deadline("09:15").resolve(NOON, UTC) == NOON + (21 + 0.25) * 3600
    berlin = dt.timezone(dt.timedelta(hours=2))
    assert parse_deadline("18:30").resolve(NOON, berlin) == NOON + 4.5 * 3600


def test_dates_with_and_without_an_offset() -> None:
    assert parse_deadline("2026-08-12T18:30Z").resolve(0.0) == NOON + 6.5 * 3600
    assert parse_deadline("2026-08-12T18:30+02:00").resolve(0.0) == NOON + 4.5 * 3600
    assert parse_deadline("2026-08-12 18:30").resolve(0.0, UTC) == NOON + 6.5 * 3600


@pytest.mark.parametrize(
    ("text", "words"),
    [("soon", "a duration like 2h"), ("0h", "positive"), ("24:00", "time of day"), ("", "bad")],
)
def test_bad_deadlines_say_what_to_write(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_deadline(text)


def test_the_outlook_compares_the_interval_with_the_deadline() -> None:
    session = Deadline(NOON + 3600, label="your session ends")
    ok = outlook(session, estimate(1800, 1500, 2400), NOON, UTC)
    assert (ok.verdict, ok.text) == ("ok", "finishes before your session ends (30 min to spare)")
    late = outlook(session, estimate(4800, 4200, 5400), NOON, UTC)
    assert (late.verdict, late.slack_s) == ("late", -1200)
    assert late.text == "likely finishes 20 min after your session ends (13:00)"
    risky = outlook(session, estimate(3300, 3000, 3900), NOON, UTC)
    assert (risky.verdict, risky.text) == (
        "at_risk",
        "may not finish before your session ends (13:00)",
    )
    assert outlook(session, None, NOON, UTC).text == "your session ends at 13:00 (in 1 h)"
    assert outlook(session, estimate(10, 5, 20), NOON + 3600, UTC).verdict == "passed"


class Run:
    """A run on a simulated clock: 10 000 steps of 1 s, checkpoints cost 20 s."""

    def __init__(self, start: float, steps: int = 10_000) -> None:
        self.start, self.steps = start, steps

    def estimate(self, now: float) -> Estimate:
        left = max(0.0, self.steps - (now - self.start))
        return estimate(left, 0.9 * left, 1.1 * left, at=now, step=1.0)


@pytest.mark.parametrize("action", ["checkpoint", "stop"])
def test_the_action_fires_once_leaving_time_to_save_before_the_cut_off(action: str) -> None:
    deadline = Deadline(NOON + 3600, action=action, reserve_s=120.0)
    policy, run = DeadlinePolicy(deadline, tz=UTC), Run(NOON)
    lead = Lead(step_s=1.0, checkpoint_s=20.0, evaluation_s=30.0)
    fired = []
    for now in range(int(NOON), int(NOON) + 4000):  # once a second
        fired += [(d.kind, d.time) for d in policy.update(float(now), run.estimate(now), lead)]
    kinds = [k for k, _ in fired]
    assert kinds == ["warn", action]  # warned at once (it is late from the start), acted once
    acted = fired[1][1]
    # reserve 120 + tick 1 + step 1 + evaluation 30 + twice the checkpoint 40 = 192 s early
    assert acted == NOON + 3600 - 192
    assert deadline.at - acted - lead.step_s - lead.evaluation_s - 20.0 >= deadline.reserve_s


def test_nothing_fires_for_a_run_that_finishes_in_time() -> None:
    policy, run = DeadlinePolicy(Deadline(NOON + 3600, reserve_s=60.0)), Run(NOON, steps=3000)
    decisions = [  # the run ends 600 s before the deadline (its interval too)
        d
        for now in range(int(NOON), int(NOON) + 3000)
        for d in policy.update(now, run.estimate(now), Lead())
    ]
    assert decisions == []


def test_warn_only_warns_and_again_when_it_turns_late() -> None:
    deadline = Deadline(NOON + 3600, action="warn")
    policy = DeadlinePolicy(deadline, tz=UTC)
    first = policy.update(NOON, estimate(3300, 3000, 3900), Lead())
    again = policy.update(NOON + 1, estimate(3300, 3000, 3900), Lead())
    later = policy.update(NOON + 2, estimate(4000, 3700, 4400, at=NOON + 2), Lead())
    assert [d.kind for d in first + again + later] == ["warn", "warn"]
    assert first[0].message == "⏰ may not finish before your deadline (13:00)"
    assert policy.acted_at is None


def test_an_unseen_checkpoint_is_costed_generously() -> None:
    assert Lead(step_s=2.0).seconds(60.0) == 60.0 + 1.0 + 2.0 + 60.0
    with pytest.raises(ValueError, match="action"):
        Deadline(NOON, action="panic")
