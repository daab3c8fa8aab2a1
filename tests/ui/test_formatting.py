"""Pure formatting: throughput, progress text, gauges, alarms, metric choice."""

from __future__ import annotations

import dataclasses

import pytest

from ludwig_nb.core.state import RunState
from ludwig_nb.ui import formatting as fmt


def test_format_throughput_and_metric() -> None:
    assert fmt.format_throughput(1234.4) == "1,234 samples/s"
    assert fmt.format_throughput(12.54) == "12.5 samples/s"
    assert fmt.format_throughput(None) == "–"
    assert fmt.format_metric(0.123456) == "0.1235"
    assert fmt.format_metric(True) == "–"


def test_progress_text_counts_epochs_from_one() -> None:
    state = RunState(status="training", step=60, total_steps=100, epoch=1, epochs=2)
    assert fmt.progress_text(state) == "step 60 / 100 · epoch 2 / 2"
    assert fmt.progress_text(RunState()) == "starting…"
    preparing = RunState(status="preprocessing", phase_detail="5,000 rows · 8 input features")
    assert fmt.progress_text(preparing) == "preprocessing 5,000 rows · 8 input features"
    done = dataclasses.replace(state, status="completed", step=100)
    assert fmt.progress_text(done).endswith("epoch 2 / 2")


def test_header_escapes_and_shows_pause_reason() -> None:
    state = RunState(name="<b>x</b>", status="paused", pause_reason="alarm:temp", engine="builtin")
    html = fmt.header_html(state)
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "paused by the alarm temp" in html
    assert fmt.STATUS_COLORS["paused"] in html


def test_alarm_banner() -> None:
    assert fmt.alarm_banner_html(()) == ""
    html = fmt.alarm_banner_html(
        [{"rule": "temperature", "device": 0, "value": 88.0, "threshold": 82.0, "action": "warn"}]
    )
    assert "temperature on GPU 0: 88 (threshold 82)" in html and "warn" in html


def test_error_html_has_a_traceback_disclosure() -> None:
    html = fmt.error_html("bad <thing>", "Traceback\n  line")
    assert "bad &lt;thing&gt;" in html and "<details" in html
    assert "<details" not in fmt.error_html("x", "")


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        ({"validation": {"label": {"loss": 1.0, "accuracy": 0.5}}}, ("label", "accuracy")),
        ({"validation": {"y": {"loss": 1.0, "r2": 0.5, "mean_absolute_error": 2}}}, ("y", "r2")),
        ({"training": {"combined": {"loss": 1.0}, "t": {"loss": 1, "hits": 3}}}, ("t", "hits")),
        ({"validation": {"combined": {"loss": 1.0}}}, None),
        ({}, None),
    ],
)
def test_pick_metric(metrics: dict, expected: tuple[str, str] | None) -> None:
    assert fmt.pick_metric(metrics) == expected


def test_pace_html_says_the_throttle_and_the_split_in_words():
    from ludwig_nb.core.state import RunState

    assert fmt.pace_html(RunState()) == ""
    state = RunState(
        throttle="throttled to 70 %: GPU 0 held at 82 °C, target 82 °C",
        throttled_s=12.4,
        batch_size=64,
        micro_batch_size=32,
    )
    html = fmt.pace_html(state)
    assert "throttled to 70 %: GPU 0 held at 82 °C, target 82 °C (idle 12 s so far)" in html
    assert "batches of 64 run as micro-batches of 32" in html


def test_an_alarm_pause_reads_as_words_not_rule_names() -> None:
    alarm = {
        "rule": "temperature>=slowdown-5",
        "device": 0,
        "value": 88.0,
        "threshold": 88.0,
        "action": "pause",
        "message": "GPU 0 at 88°C (alarm at 88°C): pause",
    }
    state = RunState(status="paused", pause_reason="alarm:temperature>=slowdown-5", alarms=(alarm,))
    assert fmt.state_text(state) == (
        "paused: GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 83 °C"
    )
    banner = fmt.alarm_banner_html([alarm])
    assert "pause → pause" not in banner and "training paused" in banner
    warn = {**alarm, "action": "warn", "message": "GPU 0 at 88°C (alarm at 88°C): warn"}
    assert "GPU 0 at 88°C (alarm at 88°C) · warning only" in fmt.alarm_banner_html([warn])
    assert fmt.state_text(RunState(status="paused", pause_reason="user")) == "paused by you"


def test_deadline_and_slowdown_banners():
    from ludwig_nb.core.state import RunState
    from ludwig_nb.ui.formatting import deadline_html, slowdown_html

    late = deadline_html(
        {"verdict": "late", "text": "likely finishes 20 min after <your> deadline"}
    )
    assert 'data-verdict="late"' in late and "&lt;your&gt;" in late and "⏰" in late
    assert "#c62828" in late and "#2e7d32" in deadline_html({"verdict": "ok", "text": "fine"})
    assert deadline_html(None) == "" and deadline_html({"verdict": "passed", "text": "x"}) == ""
    slowed = RunState(status="training", gpu_slowdown="GPU 0 throttled 40 % of the last minute")
    assert "GPU 0 throttled 40 %" in slowdown_html(slowed) and "ETA restarted" in slowdown_html(
        slowed
    )
    assert slowdown_html(RunState(status="completed", gpu_slowdown="x")) == ""
    assert slowdown_html(RunState()) == ""
