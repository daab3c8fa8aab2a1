"""Alarm policy: thresholds, debounce, hysteresis, per-device slowdown levels."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, Threshold, parse_threshold
from ludwig_nb.core.gpu_sample import GpuSample


def gpu(
    temp: float | None = 70.0, index: int = 0, slowdown: float | None = 90.0, **kw: object
) -> GpuSample:
    return GpuSample(index=index, temperature=temp, temperature_slowdown=slowdown, **kw)  # type: ignore[arg-type]


def feed(policy: AlarmPolicy, temps: list[float], index: int = 0) -> list[tuple[int, bool]]:
    """Feed one temperature per tick; return (tick, raised) for each transition."""
    out = []
    for tick, temp in enumerate(temps):
        out += [(tick, t.raised) for t in policy.update([gpu(temp, index)], float(tick))]
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("85", Threshold(85.0)),
        (85, Threshold(85.0)),
        (" 72.5 ", Threshold(72.5)),
        ("slowdown-5", Threshold(-5.0, relative=True)),
        ("Slowdown - 3", Threshold(-3.0, relative=True)),
        ("slowdown+2", Threshold(2.0, relative=True)),
        ("slowdown", Threshold(0.0, relative=True)),
    ],
)
def test_parse_threshold(text: str | int, expected: Threshold) -> None:
    assert parse_threshold(text) == expected


@pytest.mark.parametrize("text", ["hot", "slowdown-", "85C", "", True, [], [85], {"c": 85}, None])
def test_parse_threshold_rejects_with_one_line(text: object) -> None:
    with pytest.raises(ValueError, match="bad threshold") as info:
        parse_threshold(text)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_relative_threshold_resolves_against_each_device() -> None:
    level = parse_threshold("slowdown-5")
    assert level.resolve(gpu(slowdown=90.0)) == 85.0
    assert level.resolve(gpu(slowdown=None)) is None
    assert str(level) == "slowdown-5"
    assert str(parse_threshold("83")) == "83"


def test_rule_defaults_name_and_hysteresis() -> None:
    rule = AlarmRule("temperature", parse_threshold("slowdown-5"), action="pause")
    assert rule.name == "temperature>=slowdown-5"
    assert rule.clear_below == Threshold(-10.0, relative=True, strict=True, clear=True)
    assert rule.levels(gpu(slowdown=87.0)) == (82.0, 77.0)


def test_rule_from_config_reads_every_key() -> None:
    rule = AlarmRule.from_config(
        {
            "metric": "temperature",
            "threshold": 80,
            "clear_below": "70",
            "consecutive": 2,
            "action": "stop",
            "name": "hot",
        }
    )
    assert (rule.name, rule.action, rule.consecutive) == ("hot", "stop", 2)
    assert rule.levels(gpu()) == (80.0, 70.0)
    assert AlarmRule.from_config({"metric": "throttle", "action": "warn"}).threshold is None
    assert AlarmRule.from_config({}).threshold == Threshold(-5.0, relative=True)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"metric": "fan", "threshold": 1}, "unknown alarm metric 'fan'"),
        ({"metric": "memory", "threshold": 90, "action": "panic"}, "unknown alarm action"),
        ({"metric": "memory", "threshold": "slowdown-5"}, "percentage"),
        ({"metric": "memory"}, "needs a threshold"),
        ({"metric": "temperature", "treshold": 80}, "unknown alarm key 'treshold'"),
        ({"metric": "temperature", "consecutive": 0}, "at least 1"),
    ],
)
def test_rule_from_config_errors(entry: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AlarmRule.from_config(entry)


def test_debounce_needs_consecutive_samples() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", Threshold(85.0), consecutive=3)])
    # two hot samples, a cool one resets the streak, then three hot ones raise
    assert feed(policy, [86, 87, 80, 86, 86, 86]) == [(5, True)]


def test_hysteresis_clears_only_below_the_clear_level() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", Threshold(85.0), consecutive=1)])
    # 82 is below the threshold but above the clear level (80): still raised
    assert feed(policy, [90, 82, 84, 86, 79]) == [(0, True), (4, False)]


def test_clearing_is_debounced_too() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", Threshold(85.0), consecutive=2)])
    assert feed(policy, [90, 90, 70, 90, 70, 70]) == [(1, True), (5, False)]


def test_relative_rule_uses_each_devices_own_slowdown() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", parse_threshold("slowdown-5"), consecutive=1)])
    changes = policy.update([gpu(84.0, 0, slowdown=90.0), gpu(84.0, 1, slowdown=85.0)], 0.0)
    assert [(c.device, c.raised, c.threshold) for c in changes] == [(1, True, 80.0)]
    assert "GPU 1 at 84°C" in changes[0].message


def test_unknown_values_keep_the_state() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", Threshold(85.0), consecutive=2)])
    policy.update([gpu(90.0)], 0.0)
    policy.update([gpu(None)], 1.0)  # temperature not readable: the streak survives
    assert [c.raised for c in policy.update([gpu(90.0)], 2.0)] == [True]
    policy.update([GpuSample(index=0, lost=True, temperature=20.0)], 3.0)  # lost: no clear
    assert [(r.name, d) for r, d in policy.active()] == [("temperature>=85", 0)]
    # no slowdown threshold: a relative rule cannot judge this device
    relative = AlarmPolicy([AlarmRule("temperature", parse_threshold("slowdown"), consecutive=1)])
    assert relative.update([gpu(120.0, slowdown=None)], 0.0) == []


def test_memory_rule_uses_percent_used() -> None:
    policy = AlarmPolicy([AlarmRule("memory", Threshold(90.0), consecutive=1, action="stop")])
    total = 16 << 30
    assert policy.update([GpuSample(index=0, memory_used=total // 2, memory_total=total)], 0) == []
    (change,) = policy.update([GpuSample(index=0, memory_used=total - 1, memory_total=total)], 1)
    assert change.raised and change.value == pytest.approx(100.0) and change.rule.action == "stop"


def test_throttle_rule_watches_thermal_and_power_reasons_only() -> None:
    policy = AlarmPolicy([AlarmRule("throttle", consecutive=1)])
    assert policy.update([GpuSample(index=0, clock_reasons=("gpu_idle",))], 0) == []
    (up,) = policy.update([GpuSample(index=0, clock_reasons=("sw_thermal_slowdown",))], 1)
    assert up.raised and "throttling (sw_thermal_slowdown)" in up.message
    (down,) = policy.update([GpuSample(index=0, clock_reasons=())], 2)
    assert not down.raised


def test_policy_from_config_default_and_devices() -> None:
    default = AlarmPolicy.from_config(None)
    assert [(r.metric, r.action, str(r.threshold)) for r in default.rules] == [
        ("temperature", "warn", "slowdown-5")
    ]
    only_one = AlarmPolicy.from_config(
        {"devices": [1], "alarms": [{"threshold": 50, "consecutive": 1}]}
    )
    assert only_one.update([gpu(99.0, 0), gpu(99.0, 1)], 0.0)[0].device == 1
    with pytest.raises(ValueError, match="same name"):
        AlarmPolicy([AlarmRule("throttle"), AlarmRule("throttle")])


@given(
    temps=st.lists(st.floats(min_value=20, max_value=110), max_size=60),
    consecutive=st.integers(min_value=1, max_value=4),
)
def test_transitions_alternate_and_respect_debounce(temps: list[float], consecutive: int) -> None:
    rule = AlarmRule(
        "temperature", Threshold(85.0), clear_below=Threshold(80.0), consecutive=consecutive
    )
    policy = AlarmPolicy([rule])
    raised = False
    for tick, temp in enumerate(temps):
        for change in policy.update([gpu(temp)], float(tick)):
            assert change.raised is not raised  # raise, clear, raise, ...
            window = temps[tick - consecutive + 1 : tick + 1]
            assert len(window) == consecutive
            if change.raised:
                assert all(t >= 85.0 for t in window)
            else:
                assert all(t < 80.0 for t in window)
            raised = change.raised


def test_a_clear_level_above_the_raise_level_clears_at_the_raise_level() -> None:
    """``clear_below`` set above the threshold would make an alarm flap (cleared while
    still over its own threshold): the clear level is capped at the raise level."""
    rule = AlarmRule("temperature", Threshold(80.0), clear_below=Threshold(95.0), consecutive=1)
    assert rule.levels(gpu(85.0)) == (80.0, 80.0)
    policy = AlarmPolicy([rule])
    # raised at 85; 90 is still over the threshold, so it must stay raised; cleared at 79
    assert feed(policy, [85.0, 90.0, 79.0]) == [(0, True), (2, False)]


@pytest.mark.parametrize(
    ("text", "clear", "expected", "written"),
    [
        ("margin<5", False, Threshold(5.0, margin=True, strict=True), "margin<5"),
        ("Margin <= 3", False, Threshold(3.0, margin=True), "margin<=3"),
        ("margin>10", True, Threshold(10.0, margin=True, strict=True, clear=True), "margin>10"),
        ("margin>=8", True, Threshold(8.0, margin=True, clear=True), "margin>=8"),
    ],
)
def test_parse_margin_thresholds(text: str, clear: bool, expected: Threshold, written: str) -> None:
    parsed = parse_threshold(text, clear=clear)
    assert parsed == expected
    assert str(parsed) == written


@pytest.mark.parametrize(("text", "clear"), [("margin>5", False), ("margin<9", True)])
def test_a_margin_points_the_right_way(text: str, clear: bool) -> None:
    with pytest.raises(ValueError, match="margin"):
        parse_threshold(text, clear=clear)


def hot(temp: float, margin: float | None, index: int = 0) -> GpuSample:
    return GpuSample(index=index, temperature=temp, temperature_margin=margin)


def test_a_margin_rule_fires_below_its_margin_and_clears_above_the_gap() -> None:
    policy = AlarmPolicy([AlarmRule.from_config({"threshold": "margin<5", "consecutive": 1})])
    margins = [9.0, 5.0, 4.0, 3.0, 9.0, 10.0, 11.0]  # the reference stays at 90 °C
    changes = [
        (tick, t.raised, t.margin, t.threshold)
        for tick, m in enumerate(margins)
        for t in policy.update([hot(90.0 - m, m)], float(tick))
    ]
    # strict: 5 °C left is not "less than 5"; clears only past 5 + 5 = 10 °C of margin
    assert changes == [(2, True, 4.0, 85.0), (6, False, 11.0, 80.0)]
    raised = AlarmPolicy([AlarmRule.from_config({"threshold": "margin<5", "consecutive": 1})])
    (transition,) = raised.update([hot(87.0, 3.0)], 0.0)
    assert transition.message == (
        "GPU 0 at 87°C, 3 °C to slowdown (alarm under 5 °C of margin): warn"
    )


def test_a_margin_rule_without_a_margin_or_temperature_keeps_its_state() -> None:
    policy = AlarmPolicy([AlarmRule.from_config({"threshold": "margin<=5", "consecutive": 1})])
    assert policy.update([hot(89.0, None)], 0.0) == []
    assert policy.update([GpuSample(index=0, temperature_margin=1.0)], 1.0) == []
    (up,) = policy.update([hot(85.0, 5.0)], 2.0)  # inclusive: 5 °C left is enough
    assert up.raised


def test_a_margin_rule_follows_each_gpus_own_reference() -> None:
    policy = AlarmPolicy([AlarmRule.from_config({"threshold": "margin<5", "consecutive": 1})])
    changes = policy.update([hot(80.0, 2.0, index=0), hot(80.0, 12.0, index=1)], 0.0)
    assert [(c.device, c.threshold) for c in changes] == [(0, 77.0)]


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ({"metric": "memory", "threshold": "margin<5"}, "not a thermal margin"),
        ({"threshold": "margin<5", "clear_below": 80}, "both be margins"),
        ({"threshold": 85, "clear_below": "margin>9"}, "both be margins"),
        ({"threshold": "margin<5", "clear_below": "margin>4"}, "cool side"),
    ],
)
def test_margin_rules_that_cannot_work_are_refused(rule: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        AlarmRule.from_config(rule)


def test_temperature_messages_carry_the_margin_when_the_gpu_has_one() -> None:
    policy = AlarmPolicy([AlarmRule("temperature", Threshold(85.0), consecutive=1)])
    (up,) = policy.update([hot(88.0, -1.0)], 0.0)
    assert up.message == "GPU 0 at 88°C, 1 °C past slowdown (alarm at 85°C): warn"
    (down,) = policy.update([hot(70.0, 17.0)], 1.0)
    assert down.message == "GPU 0 back to 70°C, 17 °C to slowdown (below 80°C)"


def test_a_margin_clear_level_may_be_inclusive_a_temperature_never_is() -> None:
    inclusive = AlarmRule.from_config(
        {"threshold": "margin<5", "clear_below": "margin>=10", "consecutive": 1}
    )
    policy = AlarmPolicy([inclusive])
    changes = [
        (tick, t.raised)
        for tick, m in enumerate([3.0, 9.0, 10.0])
        for t in policy.update([hot(90.0 - m, m)], float(tick))
    ]
    assert changes == [(0, True), (2, False)]  # 10 °C of margin back: cleared (>=)
    plain = AlarmRule("temperature", Threshold(85.0), clear_below=Threshold(80.0), consecutive=1)
    assert feed(AlarmPolicy([plain]), [85.0, 80.0, 79.0]) == [(0, True), (2, False)]
