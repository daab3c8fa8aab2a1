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
