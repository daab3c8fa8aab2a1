"""The ETA line: fed by events, refreshed at most once a second, first prediction kept."""

from __future__ import annotations

import dataclasses
import re

from ludwig_nb.ui.eta_text import EtaText, format_estimate
from tests.ui.conftest import T0, FakeRun, started, steps


@dataclasses.dataclass
class Estimate:
    remaining_s: float
    low_s: float
    high_s: float
    state: str = "stable"


def test_fallback_formatter() -> None:
    text = format_estimate(Estimate(750, 710, 800), T0)
    assert re.fullmatch(r"≈ 12 min 30 s \(11 min 50 s – 13 min 20 s\) · done ≈ \d\d:\d\d", text)
    assert format_estimate(Estimate(5, 5, 5), T0).startswith("≈ 5 s · done")
    assert format_estimate(Estimate(-0.3, -1, 0.2), T0).startswith("≈ 0 s")
    assert format_estimate(Estimate(60, 50, 70, "warming_up"), T0).startswith("warming up… ≈ 1 min")
    assert format_estimate(Estimate(60, 50, 70, "adjusting"), T0).startswith("adjusting… ≈")
    assert format_estimate(None, T0) == "estimating…"


def test_text_changes_at_most_once_a_second() -> None:
    run = FakeRun()
    eta = EtaText(min_interval=1.0)
    for event in (started(run), *steps(0, 60, T0)):
        eta.observe(event)
    assert eta.refresh(T0 + 6.0, mono_now=0.0)
    first = eta.text
    assert "≈" in first
    for event in steps(60, 30, T0 + 6.0, step_s=0.3):  # slower steps: a new estimate
        eta.observe(event)
    assert not eta.refresh(T0 + 15.0, mono_now=0.5)
    assert eta.text == first
    eta.refresh(T0 + 15.0, mono_now=1.0)
    assert eta.text != first
    assert eta.first_finish is not None and eta.first_finish > T0


def test_before_any_step_it_says_warming_up() -> None:
    eta = EtaText()
    eta.observe(started(FakeRun()))
    eta.refresh(T0, mono_now=0.0)
    assert eta.text.startswith("warming up")
    assert eta.first_finish is None
