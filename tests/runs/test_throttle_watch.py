"""``action: throttle`` end to end on virtual time: the simulated card heats with the run's
duty, the alarm watch feeds the controller, the loop idles through ``RunControl.pace``."""

from __future__ import annotations

from typing import Any

import pytest

from ludwig_nb.core.alarms import AlarmPolicy
from ludwig_nb.core.control import RunControl
from ludwig_nb.core.events import AlarmRaised, Event, Throttled
from ludwig_nb.core.state import RunState, reduce_all
from ludwig_nb.gpu import Sampler, SimulatedGpu, ThermalProfile
from ludwig_nb.runs.alarm_watch import AlarmWatch


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Target:
    def __init__(self, clock: Clock) -> None:
        self.control = RunControl(clock=clock, sleep=clock.sleep)
        self.device_index = 0
        self.uses_gpu = True  # a run training on a GPU
        self.is_active = True
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


class FakeCapper:
    def __init__(self, refuse: str = "") -> None:
        self.refuse, self.applied, self.restored = refuse, [], 0

    def apply(self, index: int, watts: float) -> str:
        self.applied.append((index, watts))
        return self.refuse

    def restore(self) -> list[str]:
        self.restored += 1
        return []


def train(
    alarms: list[dict[str, Any]],
    seconds: float = 900.0,
    step_s: float = 0.2,
    capper: FakeCapper | None = None,
    profile: ThermalProfile | None = None,
) -> dict[str, Any]:
    """A loop of ``step_s`` steps on virtual time; one snapshot per virtual second."""
    clock = Clock()
    target = Target(clock)
    gpu = SimulatedGpu(
        load=lambda: target.control.duty,
        profile=profile or ThermalProfile(heat_tau=30.0, cool_tau=25.0),
        clock=clock,
        wall_clock=clock,
    )
    sampler = Sampler(gpu, None, clock=clock)
    policy = AlarmPolicy.from_config({"alarms": alarms})
    watch = AlarmWatch(
        sampler, policy, targets=lambda: [target], clock=clock, power_capper=lambda: capper
    )
    temps, steps, next_sample = [], 0, 0.0
    while clock.now < seconds:
        target.control.pace()  # the engine's step boundary
        clock.now += step_s  # the step itself
        steps += 1
        while clock.now >= next_sample:
            snapshot = sampler.sample_once()
            watch.on_snapshot(snapshot)
            temps.append((snapshot.time, snapshot.gpus[0].temperature, snapshot.gpus[0].power_draw))
            next_sample += 1.0
    watch.close()
    return {"target": target, "temps": temps, "steps": steps, "watch": watch}


def test_temperature_throttle_holds_target_and_keeps_training() -> None:
    out = train([{"metric": "temperature", "threshold": "slowdown-5", "action": "throttle"}])
    target, temps = out["target"], out["temps"]
    late = [t for time, t, _ in temps if time >= 450]
    assert all(abs(t - 82.0) <= 2.0 for t in late)  # slowdown 87 - 5
    assert max(t for _, t, _ in temps) < 87.0  # never reached the card's own slowdown
    # training continued, spaced: fewer steps than unthrottled, far more than a pause
    unthrottled = 900.0 / 0.2
    assert 0.6 * unthrottled < out["steps"] < 0.95 * unthrottled
    assert target.control.idle_seconds > 0.05 * 900
    throttled = [e for e in target.events if isinstance(e, Throttled)]
    assert throttled and throttled[0].metric == "temperature" and throttled[0].target == 82.0
    assert len(throttled) <= 900 / 10 + 5  # about one per 10 s: never one per sample
    state = reduce_all(target.events, RunState(status="training"))
    assert state.throttle.startswith("throttled to ")
    assert "GPU 0 held at 8" in state.throttle and "target 82 °C" in state.throttle
    assert state.throttled_s > 0
    assert target.control.duty == 1.0  # close() released the run


def test_power_throttle_holds_target() -> None:
    out = train([{"metric": "power", "threshold": 250, "action": "throttle"}], seconds=120)
    late = [p for time, _, p in out["temps"] if time >= 30]
    assert all(abs(p - 250.0) <= 5.0 for p in late)
    throttled = [e for e in out["target"].events if isinstance(e, Throttled)]
    assert throttled[0].metric == "power" and throttled[0].method == "duty"


def test_throttle_releases_when_the_card_cools() -> None:
    # a card whose full-load equilibrium is under the target: never throttled
    cool = ThermalProfile(hot=75.0, heat_tau=30.0, cool_tau=25.0)
    out = train(
        [{"metric": "temperature", "threshold": 80, "action": "throttle"}],
        seconds=300,
        profile=cool,
    )
    assert not [e for e in out["target"].events if isinstance(e, Throttled)]
    assert out["target"].control.idle_seconds == 0.0


def test_power_limit_used_when_permitted() -> None:
    capper = FakeCapper()
    alarm = {"metric": "power", "threshold": 250, "action": "throttle", "power_limit": True}
    out = train([alarm], seconds=60, capper=capper)
    assert capper.applied == [(0, 250.0)]  # once, not per sample
    assert capper.restored == 1  # close() put the original limit back
    events = [e for e in out["target"].events if isinstance(e, Throttled)]
    assert events[0].method == "power_limit" and events[0].duty == 1.0
    assert out["target"].control.idle_seconds == 0.0  # the card caps itself: no idling


def test_power_limit_refused_falls_back_to_duty_cycling(caplog: pytest.LogCaptureFixture) -> None:
    capper = FakeCapper(refuse="no permission: needs root")
    alarm = {"metric": "power", "threshold": 250, "action": "throttle", "power_limit": True}
    out = train([alarm], seconds=60, capper=capper)
    assert capper.applied == [(0, 250.0)]  # asked once
    warnings = [r for r in caplog.records if "cannot cap" in r.getMessage()]
    assert len(warnings) == 1 and "spacing the training steps" in warnings[0].getMessage()
    events = [e for e in out["target"].events if isinstance(e, Throttled)]
    assert events[0].method == "duty" and "power cap refused: no permission" in events[0].reason
    assert out["target"].control.idle_seconds > 0
    assert capper.restored == 0  # nothing was set, nothing to restore


def test_throttle_alarm_is_reported_as_an_alarm_too() -> None:
    out = train([{"metric": "temperature", "threshold": 80, "action": "throttle"}], seconds=200)
    raised = [e for e in out["target"].events if isinstance(e, AlarmRaised)]
    assert raised and raised[0].action == "throttle"
