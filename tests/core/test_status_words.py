"""status.json's worded fields: the pause, the ETA and the early stop, as the views say them."""

from ludwig_nb.core import events as ev
from ludwig_nb.core.early_stop import StopForecast, end_reason, format_forecast
from ludwig_nb.core.state import reduce_all
from ludwig_nb.core.status_text import pause_text
from ludwig_nb.core.status_words import early_stop_block, status_words

SCHEDULE = ev.ScheduleInfo(total_steps=11000, steps_per_epoch=1100, epochs=10, batch_size=8)
STARTED = ev.RunStarted(
    time=1.0, run_id="r", name="churn", engine="builtin", device="cuda:0", schedule=SCHEDULE
)
ALARM = ev.AlarmRaised(
    time=3.0,
    rule="temperature>=slowdown-5",
    device=0,
    value=88.0,
    threshold=88.0,
    action="pause",
    message="GPU 0 at 88 °C: pause",
)


def test_the_early_stop_text_is_the_forecast_every_view_shows():
    """One producer: status.json's text is ``format_forecast``'s, word for word."""
    state = reduce_all([STARTED])
    for forecast in (
        None,
        StopForecast(step=2600, earliest=1500, latest=11000, remaining_s=42.0),
        StopForecast(step=11000, earliest=9000, latest=11000),
    ):
        block = early_stop_block(state, 5, "loss", forecast)
        assert block is not None and block["text"] == format_forecast(forecast, 11000)


def test_a_live_run_carries_its_bound_and_forecast():
    state = reduce_all([STARTED])
    forecast = StopForecast(step=2600, earliest=1500, latest=11000, remaining_s=42.0)
    block = early_stop_block(state, 5, "accuracy", forecast)
    assert block == {
        "patience": 5,
        "metric": "accuracy",
        "upper_bound": 11000,
        "likely_step": 2600,
        "earliest_step": 1500,
        "likely_remaining_s": 42.0,
        "text": "at most 11,000 steps (early stopping); likely stops near step 2,600"
        " (not before 1,500), ≈ 42 s from now",
    }
    assert early_stop_block(state, 0, "accuracy", forecast) is None  # early stopping off
    assert early_stop_block(state, 5, "loss", None)["text"] == (
        "at most 11,000 steps (early stopping); too early to forecast the stop"
    )


def test_an_ended_run_says_why_with_the_patience_it_had():
    evaluation = ev.EvaluationFinished(
        time=2.0, step=2599, epoch=2, start_time=1.9, metrics={}, improved=True
    )
    finished = ev.RunFinished(time=9.0, status="completed", step=3100, reason="early stopping")
    state = reduce_all([STARTED, evaluation, finished])
    block = early_stop_block(state, 5, "accuracy", StopForecast(3100, 3100, 11000))
    reason = "stopped early: no validation improvement in 5 evaluations; best at step 2,600"
    assert block is not None and block["text"] == reason
    assert block["likely_step"] is None and block["upper_bound"] is None  # no forecast now
    words = status_words(state, block, eta_text="≈ 5 s · done ≈ 14:05")
    assert words["end_reason"] == reason == end_reason(state, 5)
    assert words["pause_text"] == ""
    assert words["eta_text"] == ""  # an ended run has no ETA
    assert words["took_text"] == "took 8 s"  # from RunStarted at 1 s to RunFinished at 9 s


def test_a_live_run_carries_its_eta_text():
    words = status_words(reduce_all([STARTED]), None, eta_text="≈ 5 min · done ≈ 14:05")
    assert words["eta_text"] == "≈ 5 min · done ≈ 14:05"
    assert words["took_text"] == ""  # live: it has not taken its time yet


def test_a_paused_run_carries_the_dashboards_words():
    state = reduce_all([STARTED, ALARM, ev.Paused(time=3.0, step=10, reason="alarm:" + ALARM.rule)])
    words = status_words(state, None)
    assert words["pause_text"] == pause_text(state)
    assert words["pause_text"] == (
        "paused: GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 83 °C"
    )
    assert words["end_reason"] == "" and words["early_stop"] is None
    assert words["alarm_texts"] == []  # the pause text already names the pausing alarm
    other = ev.AlarmRaised(
        time=3.0,
        rule="memory>=90",
        device=0,
        value=93.0,
        threshold=90.0,
        action="warn",
        message="GPU 0 memory 93 % full: warn",
    )
    words = status_words(reduce_all([other], state), None)
    assert words["alarm_texts"] == ["GPU 0 memory 93 % full · warning only"]


def test_a_live_run_lists_its_alarms_and_an_ended_one_none():
    state = reduce_all([STARTED, ALARM])
    assert status_words(state, None)["alarm_texts"] == [
        "GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 83 °C · training paused"
    ]
    ended = reduce_all([ev.RunFinished(time=9.0, status="stopped", step=10)], state)
    assert status_words(ended, None)["alarm_texts"] == []


def test_the_gpus_own_margin_words_the_pause_and_a_margin_rule_its_clear_level():
    import dataclasses

    measured = dataclasses.replace(ALARM, margin=-1.0)  # an H100: its margin counts to 87 °C
    paused = ev.Paused(time=3.0, step=10, reason="alarm:" + ALARM.rule)
    assert pause_text(reduce_all([STARTED, measured, paused])) == (
        "paused: GPU 0 at 88 °C, 1 °C past slowdown; resumes below 83 °C"
    )
    margin = ev.AlarmRaised(
        time=3.0,
        rule="margin<5",
        device=1,
        value=84.0,
        threshold=85.0,
        action="pause",
        message="GPU 1 at 84°C, 3 °C to slowdown (alarm under 5 °C of margin): pause",
        margin=3.0,
        clear="margin>12",
    )
    state = reduce_all([STARTED, margin, ev.Paused(time=3.0, step=10, reason="alarm:margin<5")])
    assert pause_text(state) == (
        "paused: GPU 1 at 84 °C, 3 °C to slowdown; resumes above 12 °C of margin"
    )
    default = dataclasses.replace(margin, clear="")  # an event from before the clear level
    state = reduce_all([STARTED, default, ev.Paused(time=3.0, step=10, reason="alarm:margin<5")])
    assert pause_text(state).endswith("resumes above 10 °C of margin")  # the default gap
