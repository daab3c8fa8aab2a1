"""The live dashboard on synthetic events: progress, ETA, curves, failure, buttons, batching."""

from __future__ import annotations

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import Snapshot
from ludwig_nb.ui.dashboard import Dashboard
from tests.ui.conftest import (
    T0,
    FakeClock,
    FakeRun,
    FakeSampler,
    SyncSpy,
    evaluation,
    gpu_sample,
    host_sample,
    started,
    steps,
)


def test_refresh_updates_progress_curves_and_throughput(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 30, T0))
    clock.now = T0 + 3.0
    dash.refresh(now=10.0)
    assert dash.progress.value == 0.3
    assert "step 30 / 100" in dash.progress_label.value
    assert "epoch 1 / 2" in dash.progress_label.value
    assert "demo" in dash.header.value and "training" in dash.header.value
    assert "320 samples/s" in dash.throughput_label.value  # 32 samples per 0.1 s
    train = dash.loss_chart.lines["train"]
    assert len(train.x) == 30 and train.x[-1] == 30
    assert train.y[0] == 2.0

    run.emit(*steps(30, 20, T0 + 3.0), evaluation(49, T0 + 5.5, accuracy=0.8, loss=0.6))
    dash.refresh(now=10.25)
    assert "step 50 / 100" in dash.progress_label.value
    assert set(dash.loss_chart.lines) == {"train", "train (smoothed)", "validation"}
    assert list(dash.loss_chart.lines["validation"].y) == [0.6]
    metric_lines = dash.metric_chart.lines
    assert list(metric_lines["validation"].y) == [0.8]
    assert list(metric_lines["training"].y) == pytest.approx([0.85])
    assert dash.metric_chart.figure.title == "label accuracy"


def test_completion_fills_the_bar_and_closes(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    finals: list[Dashboard] = []
    dash.on_final(finals.append)
    run.emit(started(run), *steps(0, 100, T0))
    dash.refresh(now=1.0)
    assert not dash.closed
    run.emit(ev.RunFinished(time=T0 + 11, status="completed", step=100))
    dash.refresh(now=1.25)
    assert dash.progress.value == 1.0
    assert dash.progress.bar_style == "success"
    assert dash.eta_label.value == "done"
    assert dash.closed and finals == [dash]
    assert dash.stop_button.disabled and dash.pause_button.disabled
    frames = dash.frames
    dash.refresh(now=2.0)  # a closed view draws nothing more
    assert dash.frames == frames


def test_failure_turns_red_and_stays(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 5, T0))
    run.emit(
        ev.RunFailed(
            time=T0 + 1,
            step=5,
            error_type="RuntimeError",
            message="CUDA out of memory",
            traceback='Traceback (most recent call last):\n  File "x.py"\nRuntimeError: boom',
        )
    )
    dash.refresh(now=1.0)
    assert "#c62828" in dash.widget.layout.border
    assert "CUDA out of memory" in dash.error.value
    assert "<details" in dash.error.value and "RuntimeError: boom" in dash.error.value
    assert dash.progress.bar_style == "danger"
    assert "failed" in dash.header.value
    assert dash.closed
    run.emit(*steps(5, 3, T0 + 2))  # nothing after the end changes the view
    dash.refresh(now=2.0)
    assert "step 5 /" in dash.progress_label.value and "#c62828" in dash.widget.layout.border


def test_buttons_reach_the_run(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 3, T0))
    dash.refresh(now=1.0)
    assert not dash.pause_button.disabled and dash.resume_button.disabled
    dash.pause_button.click()
    assert run.calls == ["pause"]
    run.emit(ev.Paused(time=T0 + 1, step=3))
    dash.refresh(now=1.25)
    assert dash.pause_button.disabled and not dash.resume_button.disabled
    assert dash.eta_label.value.startswith("paused")
    dash.resume_button.click()
    dash.stop_button.click()
    assert run.calls == ["pause", "resume", "stop:user"]


def test_log_toggle_switches_the_scale_on_the_next_frame(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 10, T0))
    dash.refresh(now=1.0)
    linear_train = dash.loss_chart.lines["train"]
    dash.log_toggle.value = True
    assert dash.loss_chart.y_axis.scale is dash.loss_chart.linear  # not written by the click
    dash.refresh(now=1.25)
    chart = dash.loss_chart
    assert chart.y_axis.scale is chart.log and chart.y_axis.visible
    log_train = chart.lines["train"]
    assert log_train.scales["y"] is chart.log and log_train.visible and len(log_train.y) == 10
    assert not linear_train.visible  # the linear marks are hidden, never re-scaled
    ticks = list(chart.y_axis.tick_values)
    assert ticks and all(t > 0 for t in ticks)
    assert chart.log.min <= min(log_train.y) and max(log_train.y) <= chart.log.max
    dash.log_toggle.value = False  # and back: the linear marks as they were
    dash.refresh(now=1.5)
    assert chart.y_axis.scale is chart.linear and linear_train.visible and not log_train.visible
    assert chart.linear.min <= min(linear_train.y) and max(linear_train.y) <= chart.linear.max


def test_axes_have_round_ticks_inside_the_range(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 73, T0))
    dash.refresh(now=1.0)
    chart = dash.loss_chart
    x_ticks = list(chart.x_axis.tick_values)
    assert chart.x_scale.min == 0 and chart.x_scale.max == 73
    assert x_ticks == [0, 20, 40, 60]
    y_ticks = list(chart.y_axis.tick_values)
    assert 2 <= len(y_ticks) <= 5
    assert chart.linear.min == y_ticks[0] and chart.linear.max == y_ticks[-1]
    assert "train (raw)" in chart.legend.value and "train (smoothed)" in chart.legend.value


def test_the_x_axis_shows_steps_epochs_or_elapsed_time(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 60, T0))
    dash.refresh(now=1.0)
    dash.x_toggle.value = "epoch"
    dash.refresh(now=1.25)
    chart = dash.loss_chart
    assert chart.x_axis.label == "epoch" and chart.lines["train"].x[-1] == 60 / 50
    dash.x_toggle.value = "time"
    dash.refresh(now=1.5)
    assert chart.x_axis.label == "elapsed (s)"
    assert chart.lines["train"].x[-1] == pytest.approx(6.0)  # 60 steps of 0.1 s


def test_many_events_make_one_batch_and_message_per_widget(
    run: FakeRun, clock: FakeClock, sync_spy: SyncSpy
) -> None:
    import ipywidgets

    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 1, T0))
    dash.refresh(now=0.0)
    sync_spy.reset()
    run.emit(*steps(1, 2000, T0 + 0.1, step_s=0.001))  # a burst of steps
    dash.refresh(now=0.25)
    batches = sync_spy.batches_per_widget()
    assert len(batches) >= 4  # progress, its label, throughput, the loss line at least
    assert max(batches.values()) == 1
    assert sync_spy.unbatched == []
    messages = sync_spy.messages_per_widget()
    if ipywidgets.__version__.startswith("8"):  # 7 sends nothing without a kernel
        assert set(messages) == set(batches)
        assert max(messages.values()) == 1
    sync_spy.reset()
    dash.refresh(now=0.5)  # nothing new: nothing held, nothing sent
    assert sync_spy.batches == [] and sync_spy.messages == []


def test_million_points_stay_bounded(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock, max_points=200)
    run.emit(started(run), *steps(0, 5_000, T0, step_s=0.001))
    dash.refresh(now=1.0)
    assert len(dash.loss_chart.lines["train"].x) <= 200
    assert dash.loss_chart.lines["train"].x[-1] == 5_000


def test_gauges_show_gpu_and_fall_back_to_host(run: FakeRun, clock: FakeClock) -> None:
    sampler = FakeSampler(
        Snapshot(time=T0, gpus=(gpu_sample(0), gpu_sample(1)), host=host_sample())
    )
    dash = Dashboard(run, sampler=sampler, clock=clock)
    run.emit(started(run, device="cuda:0"))
    dash.refresh(now=1.0)
    assert "GPU 0</b> ◀" in dash.gauges.value  # the run's device is marked
    assert "GPU 1</b> " in dash.gauges.value and "84 °C" in dash.gauges.value
    sampler.snapshot = Snapshot(time=T0 + 1, host=host_sample(), reason="no NVIDIA driver")
    dash.refresh(now=1.25)
    assert "no NVIDIA driver" in dash.gauges.value and "CPU 42 %" in dash.gauges.value
    assert "GPU 0" not in dash.gauges.value


def test_without_sampler_no_gauges(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, sampler=None, clock=clock)
    run.emit(started(run))
    dash.refresh(now=1.0)
    assert dash.gauges.value == ""


def test_alarm_banner_follows_alarm_events(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(
        started(run),
        ev.AlarmRaised(
            time=T0 + 1,
            rule="temperature",
            device=0,
            value=88.0,
            threshold=82.0,
            action="pause",
            message="GPU 0 at 88 °C (limit 82 °C)",
        ),
    )
    dash.refresh(now=1.0)
    assert "GPU 0 at 88 °C" in dash.alarms.value and "pause" in dash.alarms.value
    run.emit(ev.AlarmCleared(time=T0 + 5, rule="temperature", device=0, value=75.0))
    dash.refresh(now=1.25)
    assert dash.alarms.value == ""


def test_summary_html_after_completion(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 50, T0), evaluation(49, T0 + 5.5, 0.8, 0.6))
    run.emit(*steps(50, 50, T0 + 6), evaluation(99, T0 + 11.5, 0.9, 0.4))
    run.emit(ev.RunFinished(time=T0 + 12, status="completed", step=100))
    dash.refresh(now=1.0)
    html = dash.summary_html()
    assert html.count("<svg") == 2
    assert "0.9" in html and "accuracy" in html
    assert "took 12 s" in html
    assert str(run.directory) in html


def test_a_real_run_marks_its_gpu_once_it_has_started(tmp_path, clock: FakeClock) -> None:
    """A real Run knows its device only from RunStarted (no preset device_index)."""
    import threading

    from ludwig_nb.engines.base import Engine, TrainJob
    from ludwig_nb.runs.run import Run

    gate = threading.Event()

    class OnGpu1(Engine):
        name = "scripted"

        def fit(self, job, emit, control):
            schedule = ev.ScheduleInfo(total_steps=1, steps_per_epoch=1, epochs=1)
            emit(
                ev.RunStarted(
                    time=T0,
                    run_id=job.run_id,
                    name=job.name,
                    engine="scripted",
                    device="cuda:1",
                    schedule=schedule,
                )
            )
            gate.wait(30)
            emit(ev.RunFinished(time=T0 + 1, status="completed", step=1))

    job = TrainJob(config={}, dataset=None, run_dir=tmp_path / "r", run_id="r-1", name="r")
    real = Run(run_id="r-1", name="r", directory=tmp_path / "r", engine=OnGpu1(), job=job)
    sampler = FakeSampler(Snapshot(time=T0, gpus=(gpu_sample(0), gpu_sample(1)), host=None))
    dash = Dashboard(real, sampler=sampler, clock=clock)  # made before the run starts
    assert real.device_index is None
    real.start()
    try:
        from tests.runs.conftest import until

        until(lambda: real.device_index == 1)
        dash.refresh(now=1.0)
        assert "GPU 1</b> ◀" in dash.gauges.value and "GPU 0</b> ◀" not in dash.gauges.value
    finally:
        gate.set()
        real.wait(30)


def test_preprocessing_says_what_it_works_on(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(
        ev.PhaseChanged(time=T0, phase="preprocessing", detail="5,000 rows · 8 input features")
    )
    dash.refresh(now=1.0)
    assert dash.progress_label.value == "preprocessing 5,000 rows · 8 input features"
    assert "step 0" not in dash.progress_label.value
    assert dash.eta_label.value == "ETA after the first steps"


def test_a_pause_is_said_in_words_and_freezes_the_estimate(run: FakeRun, clock: FakeClock) -> None:
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 40, T0))
    clock.now = T0 + 4.0
    dash.refresh(now=1.0)
    before = dash.eta.text
    assert "samples/s" in dash.throughput_label.value
    run.emit(ev.Paused(time=T0 + 4.0, step=40, reason="user"))
    clock.now = T0 + 60.0  # a minute paused: a live estimate would have moved on
    dash.refresh(now=5.0)
    assert "paused by you" in dash.header.value
    assert dash.eta_label.value == f"paused · estimate frozen: {before}".replace("'", "&#x27;")
    assert dash.throughput_label.value == ""


def test_early_stopping_shows_the_total_as_a_bound(clock: FakeClock) -> None:
    run = FakeRun(
        config={"output_features": [{"name": "label", "type": "category"}], "trainer": {}}
    )
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 40, T0))
    clock.now = T0 + 4.0
    dash.refresh(now=1.0)
    assert "at most 100 steps (early stopping)" in dash.eta_label.value


def test_an_early_stop_bound_reads_at_most_never_at_most_about(clock: FakeClock) -> None:
    run = FakeRun(
        config={"output_features": [{"name": "label", "type": "category"}], "trainer": {}}
    )
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 40, T0))
    clock.now = T0 + 4.0
    dash.refresh(now=1.0)
    text = dash.eta.text
    assert "≤ ≈" not in text
    assert text.startswith(("≤ ", "warming up", "estimating")), text


def test_before_the_first_step_it_shows_the_data_progress_and_makes_no_chart(
    run: FakeRun, clock: FakeClock
) -> None:
    made: list[str] = []

    def chart(title: str, y_label: str) -> object:
        from ludwig_nb.ui.charts.svg_widgets import SvgCurveChart

        made.append(title)
        return SvgCurveChart(title, y_label)

    dash = Dashboard(run, clock=clock, chart=chart)
    run.emit(
        ev.PhaseChanged(time=T0, phase="queued"),
        ev.DataProgress(time=T0, stage="read", source="demo:churn", rows=5000, columns=21),
        ev.DataProgress(time=T0, stage="preprocessing", feature="x", index=2, total=4, rows=3500),
    )
    dash.refresh(now=1.0)
    assert made == []  # bqplot (and the pandas it loads) wait for a first point
    assert "feature 2 of 4 (x) · 3,500 rows" in dash.progress_label.value
    assert "step 0 / ?" not in dash.progress_label.value
    run.emit(started(run), *steps(0, 3, T0))
    dash.refresh(now=2.0)
    assert made == ["loss", "validation metric"]
    assert dash.charts_row.children == (dash.loss_chart.widget, dash.metric_chart.widget)


def test_a_discarded_dashboard_draws_no_last_frame_and_calls_nothing(
    run: FakeRun, clock: FakeClock
) -> None:
    dash = Dashboard(run, clock=clock)
    finals: list[object] = []
    dash.on_final(finals.append)
    dash.discard()
    run.emit(ev.RunFailed(time=T0, step=0, error_type="DataError", message="bad"))
    dash.refresh(now=1.0)
    assert dash.closed and finals == [] and dash.frames == 0


def test_the_deadline_and_a_gpu_slowdown_show_under_the_eta(clock: FakeClock) -> None:
    import dataclasses

    class Late(FakeRun):
        def eta_reading(self, now: float):  # type: ignore[no-untyped-def]
            deadline = {"verdict": "late", "text": "likely finishes 20 min after your deadline"}
            return dataclasses.replace(super().eta_reading(now), deadline=deadline)

    run = Late()
    dash = Dashboard(run, clock=clock)
    run.emit(started(run), *steps(0, 30, T0))
    run.emit(ev.GpuSlowdown(time=T0 + 3, device=0, active=True, share=0.5, text="GPU 0 throttled"))
    clock.now = T0 + 3.0
    dash.refresh(now=10.0)
    assert 'data-verdict="late"' in dash.alarms.value
    assert "likely finishes 20 min after your deadline" in dash.alarms.value
    assert "⚠ GPU 0 throttled" in dash.alarms.value
    run.emit(ev.RunFinished(time=T0 + 4, status="completed", step=30))
    dash.refresh(now=11.0)
    assert "deadline" not in dash.alarms.value and "throttled" not in dash.alarms.value
