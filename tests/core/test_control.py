import threading

import pytest

from ludwig_nb.core.control import RunControl, StopRequested


def test_stop_raises_at_the_next_checkpoint_and_keeps_the_first_reason():
    control = RunControl()
    control.checkpoint()
    control.stop("alarm")
    control.stop("user")
    with pytest.raises(StopRequested, match="alarm"):
        control.checkpoint()
    assert control.stop_reason == "alarm"


def test_pause_reasons_nest():
    control = RunControl()
    control.pause("user")
    control.pause("alarm:temp")
    control.resume("user")
    assert control.paused and control.pause_reasons == {"alarm:temp"}
    control.resume("alarm:temp")
    assert not control.paused


def test_wait_while_paused_blocks_until_resumed_and_reports_both_edges():
    control = RunControl()
    control.pause("user")
    seen = []
    polls = threading.Event()

    def poll():
        polls.set()

    worker = threading.Thread(
        target=control.wait_while_paused,
        kwargs={
            "on_pause": seen.append,
            "on_resume": lambda r: seen.append("resumed:" + r),
            "poll": poll,
            "poll_interval": 0.01,
        },
    )
    worker.start()
    assert polls.wait(5), "poll() must run while paused"
    assert worker.is_alive()
    control.resume()
    worker.join(5)
    assert not worker.is_alive() and seen == ["user", "resumed:user"]


def test_stop_releases_a_paused_wait():
    control = RunControl()
    control.pause()
    worker = threading.Thread(target=control.wait_while_paused, kwargs={"poll_interval": 0.01})
    worker.start()
    control.stop()
    worker.join(5)
    assert not worker.is_alive()


def _paced(duty: float):
    now, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    control = RunControl(clock=lambda: now[0], sleep=sleep)
    control.set_pace(duty, "alarm:t")
    return control, now, slept


def test_pace_idles_the_duty_cycles_share_of_the_work():
    control, now, slept = _paced(0.5)
    assert control.pace() == 0.0  # the first boundary: no work measured yet
    now[0] += 1.0  # one step of work
    assert control.pace() == 1.0  # duty 0.5: as long idle as busy
    now[0] += 0.3
    assert control.pace() == pytest.approx(0.3)
    control.set_pace(0.25)
    now[0] += 1.0
    assert control.pace() == pytest.approx(3.0)
    assert control.idle_seconds == pytest.approx(4.3) and slept == pytest.approx([1, 0.3, 3])
    now[0] += 100.0
    assert control.pace(max_idle=10.0) == 10.0  # capped


def test_pace_full_duty_stop_and_pause_do_not_idle():
    control, now, slept = _paced(1.0)
    assert control.pace_reason == ""
    control.pace()
    now[0] += 1.0
    assert control.pace() == 0.0
    control.set_pace(0.5, "x")
    control.pace()
    now[0] += 1.0
    control.stop()
    assert control.pace() == 0.0 and slept == []


def test_a_pause_is_not_counted_as_work():
    control, now, _ = _paced(0.5)
    control.pace()
    control.pause("user")
    now[0] += 50.0  # paused for 50 s

    def release(_reason: str) -> None:
        control.resume("user")

    control.wait_while_paused(on_pause=release)
    now[0] += 1.0
    assert control.pace() == 1.0  # only the second of work after the pause


def test_set_pace_rejects_a_bad_duty():
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        RunControl().set_pace(0.0)
    with pytest.raises(ValueError):
        RunControl().set_pace(1.5)


def test_poll_runs_at_every_checkpoint_and_can_stop_the_run():
    requests = ["", "", "stop"]
    control = RunControl(poll=lambda: requests.pop(0) == "stop" and control.stop("sidebar"))
    control.checkpoint()
    control.checkpoint()
    with pytest.raises(StopRequested, match="sidebar"):
        control.checkpoint()
    assert requests == []


def test_run_control_is_a_control():
    from ludwig_nb.core.control import Control

    def engine_side(control: Control) -> bool:
        control.checkpoint()
        control.wait_while_paused(on_pause=None, on_resume=None)
        return control.stop_requested or control.paused or control.stop_reason is not None

    assert engine_side(RunControl()) is False
