"""``RunRecorder``: whole lines, a flush timer, and a full disk that loses nothing."""

import errno
import json

import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.state import RunState, reduce_state
from ludwig_nb.store import recorder as recorder_module
from ludwig_nb.store import rundir
from ludwig_nb.store.recorder import RunRecorder


class ManualTicker:
    """The recorder's timer, fired by the test."""

    def __init__(self):
        self.callback = None
        self.stopped = False

    def __call__(self, callback, interval):
        self.callback, self.interval = callback, interval
        return self.stop

    def stop(self):
        self.stopped = True

    def fire(self):
        self.callback()


def _step(i, t):
    return ev.StepFinished(time=t, step=i, epoch=0, start_time=t - 0.1, batch_size=4, loss=1.0)


def _lines(directory):
    return (directory / rundir.EVENTS_FILE).read_text().splitlines()


def test_steps_reach_the_disk_on_the_timer_without_a_new_event(tmp_path):
    ticker = ManualTicker()
    now = [0.0]
    rec = RunRecorder(tmp_path, ticker=ticker, clock=lambda: now[0])
    state = RunState(status="training")
    for i in range(3):
        rec.record(_step(i, 10.0 + i * 0.01), state)
    assert ticker.interval <= 1.0  # the README's promise: at most a second on disk
    written = len(_lines(tmp_path))
    ticker.fire()  # no new event: the timer alone writes what is buffered
    assert written < 3 and len(_lines(tmp_path)) == 3
    now[0] = 20.0
    ticker.fire()
    assert json.loads((tmp_path / rundir.STATUS_FILE).read_text())["written_at"] == 20.0
    rec.close()
    assert ticker.stopped


def test_the_real_timer_flushes_within_a_second(tmp_path):
    from tests.runs.conftest import until

    rec = RunRecorder(tmp_path, flush_interval=0.05)
    for i in range(3):
        rec.record(_step(i, 1.0 + i * 0.001), RunState(status="training"))
    until(lambda: len(_lines(tmp_path)) == 3)  # synchronisation, not timing
    rec.close()


class FullDisk:
    """ENOSPC at the recorder's write seam: half the bytes land, then the disk is full."""

    def __init__(self, monkeypatch):
        self.full = False
        real = recorder_module._write_all

        def write(fd, data):
            if self.full:
                real(fd, data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")
            real(fd, data)

        monkeypatch.setattr(recorder_module, "_write_all", write)
        real_atomic = rundir.write_json_atomic

        def atomic(path, data):
            if self.full:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            real_atomic(path, data)

        monkeypatch.setattr(rundir, "write_json_atomic", atomic)


def test_a_full_disk_leaves_whole_lines_and_loses_nothing_once_space_is_freed(
    tmp_path, monkeypatch
):
    disk = FullDisk(monkeypatch)
    ticker = ManualTicker()
    rec = RunRecorder(tmp_path, ticker=ticker, clock=lambda: 100.0)
    state = RunState(status="training")
    rec.record(ev.PhaseChanged(time=1.0, phase="training"), state)
    disk.full = True
    for i in range(4):
        rec.record(_step(i, 2.0 + i), state)
    failed = reduce_state(
        state, ev.RunFailed(time=9.0, step=4, error_type="OSError", message="disk")
    )
    rec.record(ev.RunFailed(time=9.0, step=4, error_type="OSError", message="disk"), failed)
    text = (tmp_path / rundir.EVENTS_FILE).read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 1  # the half line was cut off
    status = json.loads((tmp_path / rundir.STATUS_FILE).read_text())
    assert status["status"] == "failed" and "No space left" in status["write_error"]
    rec.close()
    assert not ticker.stopped and rec.pending_events == 5  # still retrying
    disk.full = False
    ticker.fire()
    types = [json.loads(line)["type"] for line in _lines(tmp_path)]
    assert types == ["phase_changed", *["step_finished"] * 4, "run_failed"]
    assert ticker.stopped and rec.pending_events == 0


def test_a_closed_recorder_gives_up_after_its_retry_time(tmp_path, monkeypatch):
    disk = FullDisk(monkeypatch)
    ticker = ManualTicker()
    now = [0.0]
    rec = RunRecorder(tmp_path, ticker=ticker, clock=lambda: now[0])
    disk.full = True
    rec.record(ev.PhaseChanged(time=1.0, phase="training"), RunState(status="training"))
    rec.close(retry_s=60.0)
    now[0] = 61.0
    ticker.fire()
    assert ticker.stopped and rec.pending_events == 0


@pytest.mark.parametrize("interval", [0.5, 1.0])
def test_status_is_rewritten_on_the_timer_while_training(tmp_path, interval):
    ticker = ManualTicker()
    now = [0.0]
    rec = RunRecorder(tmp_path, ticker=ticker, clock=lambda: now[0], status_interval=interval)
    rec.record(ev.PhaseChanged(time=0.0, phase="training"), RunState(status="training"))
    now[0] = interval
    ticker.fire()
    assert json.loads((tmp_path / rundir.STATUS_FILE).read_text())["written_at"] == interval
    rec.close()


def test_a_pause_reaches_status_json_at_once_not_at_the_next_status_interval(tmp_path):
    """Steps refresh status.json once per interval; any other event (a pause, an alarm, the
    end) rewrites it at once, so the sidebar never shows "training" for a paused run."""
    ticker = ManualTicker()
    rec = RunRecorder(tmp_path, ticker=ticker, clock=lambda: 0.0, status_interval=60.0)
    state = RunState(status="training")
    rec.record(_step(0, 10.0), state)  # the first status write
    state = reduce_state(state, _step(1, 10.5))
    rec.record(_step(1, 10.5), state)  # within the interval: status.json keeps step 1
    status = json.loads((tmp_path / rundir.STATUS_FILE).read_text())
    assert status["step"] == 0 and status["written_at"] == 10.0
    paused = ev.Paused(time=11.0, step=2, reason="user")
    rec.record(paused, reduce_state(state, paused))
    status = json.loads((tmp_path / rundir.STATUS_FILE).read_text())
    assert status["status"] == "paused" and status["written_at"] == 11.0
    assert json.loads(_lines(tmp_path)[-1])["type"] == "paused"  # flushed at once too
    rec.close()


def test_steps_leave_status_json_to_the_timer(tmp_path):
    """With the timer running, a step never writes status.json on the training thread (no
    file write, no ETA there): the timer writes the latest state once it is due."""
    ticker = ManualTicker()
    now = [0.0]
    asked = []
    rec = RunRecorder(
        tmp_path, ticker=ticker, clock=lambda: now[0], status_interval=1.0, eta=asked.append
    )
    state = RunState(status="training")
    rec.record(ev.PhaseChanged(time=0.0, phase="training"), state)  # non-step: written at once
    asked.clear()
    for i in range(5):
        state = reduce_state(state, _step(i, 2.0 + i))  # every step is past the interval
        rec.record(_step(i, 2.0 + i), state)
    status = json.loads((tmp_path / rundir.STATUS_FILE).read_text())
    assert status["step"] == 0 and asked == []
    now[0] = 7.0
    ticker.fire()
    status = json.loads((tmp_path / rundir.STATUS_FILE).read_text())
    assert status["step"] == 5 and status["written_at"] == 7.0 and asked == [7.0]
    rec.close()


def test_without_a_timer_a_due_step_still_writes_status_json(tmp_path):
    rec = RunRecorder(tmp_path, ticker=None, status_interval=1.0)
    state = RunState(status="training")
    rec.record(ev.PhaseChanged(time=0.0, phase="training"), state)
    state = reduce_state(state, _step(0, 2.0))
    rec.record(_step(0, 2.0), state)
    assert json.loads((tmp_path / rundir.STATUS_FILE).read_text())["step"] == 1
    rec.close()
