"""The terminal view: a plain line every few seconds without a terminal, a pause in words."""

import io

from ludwig_nb.core import events as ev
from ludwig_nb.ui.terminal import Follower, progress_line
from tests.ui.conftest import T0, FakeRun, started, steps


class _Run(FakeRun):
    def __init__(self):
        super().__init__(
            config={"output_features": [{"name": "label", "type": "category"}], "trainer": {}}
        )


class _Stream(io.StringIO):
    def isatty(self):
        return False


def test_without_a_terminal_a_line_every_ten_seconds_and_no_carriage_returns():
    run, stream = _Run(), _Stream()
    now = [0.0]
    follower = Follower(run, stream, interval=10.0, clock=lambda: now[0], wall=lambda: T0)
    run.emit(started(run))
    for i in range(30):  # 30 frames, 1.5 s apart: 45 s
        run.emit(*steps(i, 1, T0 + i))
        follower.show(None, done=False)
        now[0] += 1.5
    printed = stream.getvalue()
    assert "\r" not in printed
    assert follower.lines == 5  # at 0, 10.5, 21, 31.5 and 42 s
    assert printed.splitlines()[-1].startswith("training · step 29 / 100 (29 %) · epoch 1 / 2")
    assert "at most 100 steps (early stopping); too early to forecast the stop" in printed


def test_a_paused_line_says_why_and_freezes_the_estimate():
    run = _Run()
    run.emit(started(run), *steps(0, 10, T0))
    alarm = ev.AlarmRaised(
        time=T0 + 11,
        rule="temperature>=slowdown-5",
        device=0,
        value=88.0,
        threshold=88.0,
        action="pause",
    )
    run.emit(alarm, ev.Paused(time=T0 + 11, step=10, reason="alarm:temperature>=slowdown-5"))
    line = Follower(run, _Stream()).line()
    assert line.startswith(
        "paused: GPU 0 at 88 °C, 5 °C under its slowdown point; resumes below 83 °C · step 10"
    )
    assert "estimate frozen: ETA" in line
    assert progress_line(run.state, "ETA x") != line  # the words replace the bare status


def test_following_a_run_to_its_end_prints_its_last_line_and_closes_the_view():
    run, stream = _Run(), _Stream()
    run.emit(started(run), *steps(0, 5, T0))
    follower = Follower(run, stream, interval=10.0, clock=lambda: 0.0, wall=lambda: T0 + 6)
    assert not follower.closed and not follower.wait_closed(0)
    run.emit(ev.RunFinished(time=T0 + 6, status="completed", step=5))
    follower.follow()
    assert follower.closed and follower.wait_closed(0)
    assert stream.getvalue().splitlines()[-1] == "completed · step 5"
    assert follower.state.status == "completed"  # the view's state caught up with the run


def test_on_a_terminal_a_bar_moves_with_the_steps_and_carries_the_line(monkeypatch):
    class Tty(_Stream):
        def isatty(self):
            return True

    run, stream = _Run(), Tty()
    run.emit(started(run), *steps(0, 40, T0))
    follower = Follower(run, stream, wall=lambda: T0 + 41)
    bar = follower._bar()
    follower.show(bar, done=False)
    assert (bar.n, bar.total) == (40, 100)
    assert "training · step 40 / 100 (40 %)" in bar.postfix
    bar.close()
    assert follower.lines == 0  # a bar, never a printed line


def test_the_line_says_how_the_deadline_looks_and_when_a_gpu_slows_down():
    import dataclasses

    class _Late(_Run):
        def eta_reading(self, now):
            deadline = {
                "verdict": "late",
                "text": "likely finishes 20 min after your deadline (18:30)",
            }
            return dataclasses.replace(super().eta_reading(now), deadline=deadline)

    run = _Late()
    run.emit(started(run), *steps(0, 10, T0))
    slowed = ev.GpuSlowdown(
        time=T0 + 11,
        device=0,
        active=True,
        share=0.4,
        text="GPU 0 throttled 40 % of the last minute",
    )
    run.emit(slowed)
    line = Follower(run, _Stream(), wall=lambda: T0 + 11).line()
    assert "⏰ likely finishes 20 min after your deadline (18:30)" in line
    assert line.endswith("⚠ GPU 0 throttled 40 % of the last minute")
    run.emit(ev.GpuSlowdown(time=T0 + 12, device=0, active=False, share=0.0))
    assert "⚠" not in Follower(run, _Stream(), wall=lambda: T0 + 12).line()
