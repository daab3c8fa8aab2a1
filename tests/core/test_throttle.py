"""The throttle controller on the simulated card's thermal model, on virtual time."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import pytest

from ludwig_nb.core.throttle import (
    Gains,
    ThrottleController,
    describe_throttle,
    gains_for,
)
from ludwig_nb.gpu.simulated import SimulatedGpu, ThermalProfile

TARGET = 82.0


def closed_loop(
    heat_tau: float,
    metric: str = "temperature",
    target: float = TARGET,
    seconds: int = 1500,
    quantise: bool = False,
) -> list[tuple[float, float, float, bool]]:
    """(time s, reading, duty, engaged) each second; the card works the controller's duty."""
    now, duty = [0.0], [1.0]
    gpu = SimulatedGpu(
        load=lambda: duty[0],
        profile=ThermalProfile(heat_tau=heat_tau, cool_tau=0.75 * heat_tau),
        clock=lambda: now[0],
        wall_clock=lambda: now[0],
    )
    controller = ThrottleController(target, gains_for(metric, target))
    out = []
    for second in range(seconds):
        now[0] = float(second)
        sample = gpu.sample()[0]
        value = sample.temperature if metric == "temperature" else sample.power_draw
        assert value is not None
        if quantise:
            value = float(round(value))  # NVML reports whole °C
        decision = controller.update(value, now[0])
        duty[0] = decision.duty
        out.append((now[0], value, decision.duty, decision.engaged))
    return out


def settled_after(trace, target: float, band: float) -> float | None:
    """The first time after which every reading stays within ``band`` of ``target``."""
    for i in range(len(trace)):
        if all(abs(v - target) <= band for _, v, _, _ in trace[i:]):
            return trace[i][0]
    return None


@pytest.mark.parametrize("heat_tau", [6.0, 30.0, 120.0])
@pytest.mark.parametrize("quantise", [False, True])
def test_temperature_held_within_2c_at_lower_duty(heat_tau: float, quantise: bool) -> None:
    trace = closed_loop(heat_tau, quantise=quantise)
    settled = settled_after(trace, TARGET, 2.0)
    assert settled is not None and settled < 10 * heat_tau
    assert max(v for _, v, _, _ in trace) <= TARGET + 3.0  # overshoot while engaging
    late = trace[len(trace) // 2 :]
    readings = [v for _, v, _, _ in late]
    # no sustained oscillation: the second half sits within 1 °C, peak to peak
    assert max(readings) - min(readings) <= 1.0
    assert all(abs(v - TARGET) <= 1.0 for v in readings)
    duties = [d for _, _, d, _ in late]
    # the card at full load would settle at 95 °C: training goes on, slower
    ideal = (TARGET - 35.0) / (95.0 - 35.0)
    assert all(0.6 < d < 1.0 for d in duties)
    assert abs(sum(duties) / len(duties) - ideal) < 0.03
    # hysteresis: engaged once, never released while hot
    engaged = [e for _, _, _, e in trace]
    flips = sum(1 for a, b in itertools.pairwise(engaged) if a != b)
    assert flips == 1


def test_power_target_held() -> None:
    trace = closed_loop(30.0, metric="power", target=250.0, seconds=300)
    settled = settled_after(trace, 250.0, 5.0)
    assert settled is not None and settled < 20
    duties = [d for t, _, d, _ in trace if t >= settled]
    ideal = (250.0 - 60.0) / ((300.0 - 60.0) * 0.97)
    assert abs(duties[-1] - ideal) < 0.02
    assert max(duties) - min(duties) < 0.05


def test_releases_when_cool_and_not_before() -> None:
    gains = gains_for("temperature", TARGET)
    c = ThrottleController(TARGET, gains)
    c.update(70.0, 0.0)
    assert not c.engaged and c.duty == 1.0
    c.update(81.0, 1.0)  # rising into the engage band: armed before the target
    assert c.engaged
    c.update(84.0, 2.0)
    assert c.duty < 1.0
    t = 3.0
    while c.duty < 1.0 and t < 500:  # the card cools: duty climbs back to 1
        c.update(70.0, t)
        t += 1.0
    assert c.duty == 1.0 and c.engaged  # not released at once: hysteresis
    start = t
    while c.engaged and t < 1000:
        c.update(70.0, t)
        t += 1.0
    assert not c.engaged and t - start >= gains.release_after


def test_no_release_while_within_release_band() -> None:
    c = ThrottleController(TARGET, gains_for("temperature", TARGET))
    c.update(83.0, 0.0)
    for t in range(1, 400):
        c.update(TARGET - 1.0, float(t))  # just under target: duty rises to 1 but stays armed
    assert c.engaged


def test_anti_windup_recovers_quickly_after_saturation() -> None:
    g = Gains(kp=0.06, ki=0.006, engage_band=2, release_band=4, deadband=0.5, floor=35)
    c = ThrottleController(TARGET, g, min_duty=0.1)
    for t in range(300):  # a card far too hot: duty pinned at the floor for 5 minutes
        c.update(95.0, float(t))
    assert c.duty == 0.1
    c.update(80.0, 300.0)
    rise = []
    for t in range(301, 320):
        rise.append(c.update(79.0, float(t)).duty)
    # no stored integral to unwind (a position-form PI would carry 0.006 * 13 * 300 = 23
    # of duty to work off): the first cool readings lift the duty off the floor at once
    assert rise[0] > 0.5 and rise[-1] == 1.0


def test_unknown_reading_keeps_duty() -> None:
    c = ThrottleController(TARGET, gains_for("temperature", TARGET))
    c.update(85.0, 0.0)
    before = c.duty
    assert c.update(None, 1.0).duty == before
    assert c.update(math.nan, 2.0).duty == before


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="finite"):
        ThrottleController(math.inf, gains_for("temperature", 80))
    with pytest.raises(ValueError, match="min_duty"):
        ThrottleController(80, gains_for("temperature", 80), min_duty=0)
    with pytest.raises(ValueError, match="temperature or power"):
        gains_for("memory", 90)


def test_describe_in_words() -> None:
    facts = SimpleNamespace(
        duty=0.7, device=0, metric="temperature", value=82.2, target=82, method="duty"
    )
    assert describe_throttle(facts) == "throttled to 70 %: GPU 0 held at 82 °C, target 82 °C"
    assert describe_throttle(SimpleNamespace(**{**vars(facts), "duty": 1.0})) == ""
    capped = SimpleNamespace(
        **{**vars(facts), "metric": "power", "method": "power_limit", "value": 248, "target": 250}
    )
    assert describe_throttle(capped) == "power capped at 250 W: GPU 0 draws 248 W"
