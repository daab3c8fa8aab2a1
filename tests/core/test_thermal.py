"""Thermal headroom from any two of margin, T.Limit offsets and absolute thresholds."""

from __future__ import annotations

import pytest

from ludwig_nb.core.thermal import (
    absolute_thresholds,
    describe_margin,
    margin_from_reference,
    reference_temperature,
)

H100_ABS = {"shutdown": 92.0, "slowdown": 89.0, "gpu_max": 87.0, "memory_max": 95.0}
H100_TLIMIT = {"shutdown": -5.0, "slowdown": -2.0, "gpu_max": 0.0}


def test_a_point_known_in_both_units_fixes_the_reference() -> None:
    assert reference_temperature(H100_ABS, H100_TLIMIT) == 87.0
    # slowdown alone: 89 + (-2); the memory point cannot anchor (another sensor)
    assert reference_temperature({"slowdown": 89.0}, {"slowdown": -2.0}) == 87.0
    assert reference_temperature({"memory_max": 95.0}, {"memory_max": 3.0}) is None


def test_the_reference_from_a_live_margin_or_the_nearest_slowdown_point() -> None:
    assert reference_temperature({}, H100_TLIMIT, temperature=70.0, margin=17.0) == 87.0
    assert reference_temperature({"slowdown": 90.0, "gpu_max": 85.0}, {}) == 85.0
    assert reference_temperature({"slowdown": 87.0, "gpu_max": 89.0}, {}) == 87.0
    assert reference_temperature({}, H100_TLIMIT) is None


def test_missing_thresholds_follow_from_the_offsets() -> None:
    points = absolute_thresholds({"memory_max": 95.0}, H100_TLIMIT, reference=87.0)
    assert points == {"shutdown": 92.0, "slowdown": 89.0, "memory_max": 95.0, "gpu_max": 87.0}
    assert absolute_thresholds({}, H100_TLIMIT, reference=None)["slowdown"] is None


def test_margin_and_its_words() -> None:
    assert margin_from_reference(87.0, 81.0) == 6.0
    assert margin_from_reference(None, 81.0) is None
    assert margin_from_reference(87.0, None) is None
    assert describe_margin(6.0) == "6 °C to slowdown"
    assert describe_margin(0.2) == "at its slowdown point"
    assert describe_margin(-3.0) == "3 °C past slowdown"


@pytest.mark.parametrize("temperature", [20.0, 60.0, 87.0, 95.0])
def test_the_three_ways_agree_on_an_h100(temperature: float) -> None:
    live = 87.0 - temperature  # what nvmlDeviceGetMarginTemperature says
    from_fields = margin_from_reference(reference_temperature(H100_ABS, H100_TLIMIT), temperature)
    from_legacy = margin_from_reference(reference_temperature(H100_ABS, {}), temperature)
    assert live == from_fields == from_legacy
