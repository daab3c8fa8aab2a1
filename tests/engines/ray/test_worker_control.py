"""WorkerControl: what rank 0 reads becomes every rank's decision through ``agree``."""

from __future__ import annotations

import pytest

from ludwig_nb.core.control import StopRequested
from ludwig_nb.engines.ray.worker_control import WorkerControl


def test_a_stop_read_by_rank_0_raises_at_the_boundary():
    state = [(None, None, 1.0)]
    control = WorkerControl(lambda: state[0], lambda t: state[0])
    control.checkpoint()
    state[0] = ("alarm:hot", None, 1.0)
    with pytest.raises(StopRequested, match="alarm:hot"):
        control.checkpoint()
    assert (control.stop_requested, control.stop_reason) == (True, "alarm:hot")


def test_another_rank_stops_because_the_all_reduce_says_so():
    agreed = [[0.0, 0.0, 0.0]]
    control = WorkerControl(
        lambda: (None, None, 1.0), lambda t: (None, None, 1.0), agree=lambda values: agreed[0]
    )
    control.checkpoint()
    agreed[0] = [1.0, 0.0, 0.0]  # rank 0 contributed the stop
    with pytest.raises(StopRequested):
        control.checkpoint()


def test_pause_waits_in_agreement_until_every_rank_sees_the_resume():
    reads = iter([("", "user", 1.0), (None, "user", 1.0), (None, "user", 1.0), (None, None, 1.0)])
    sent: list[list[float]] = []

    def agree(values):
        sent.append(values)
        return values

    control = WorkerControl(lambda: next(reads), lambda t: next(reads), agree=agree)
    control.checkpoint()
    assert control.paused
    log: list[str] = []
    control.wait_while_paused(
        on_pause=lambda r: log.append(f"pause {r}"), on_resume=lambda r: log.append(f"resume {r}")
    )
    assert log == ["pause user", "resume user"]
    assert len(sent) == 4  # one agreement per poll while paused: the ranks stay in step
    assert not control.paused


class VirtualTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_every_rank_idles_the_duty_the_ranks_agreed_on():
    """Rank 0 read a duty of 0.5; rank 1 read nothing (1.0): the all-reduce of 1 - duty
    gives both 0.5, and each idles as long as it worked since the last boundary."""
    time = VirtualTime()
    contributions: list[list[float]] = []

    def agree(values):  # what all_reduce(MAX) over rank 0 (0.5) and this rank gives
        contributions.append(values)
        return [max(v, w) for v, w in zip(values, [0.0, 0.0, 0.5], strict=True)]

    control = WorkerControl(
        lambda: (None, None, 1.0),
        lambda t: (None, None, 1.0),
        agree=agree,
        clock=time.clock,
        sleep=time.sleep,
    )
    assert control.pace() == 0.0  # the first boundary: no work measured yet
    control.checkpoint()
    assert control.duty == 0.5 and contributions[-1] == [0.0, 0.0, 0.0]
    time.now += 0.2  # a step's work
    assert control.pace() == pytest.approx(0.2)  # half the time: idle as long as busy
    time.now += 0.1
    assert control.pace(max_idle=0.05) == pytest.approx(0.05)  # capped
    assert control.idle_seconds == pytest.approx(0.25)


def test_rank_0_contributes_its_duty_and_a_release_ends_the_idling():
    time = VirtualTime()
    state = [(None, None, 0.25)]
    sent: list[list[float]] = []

    def agree(values):
        sent.append(values)
        return values

    control = WorkerControl(
        lambda: state[0], lambda t: state[0], agree=agree, clock=time.clock, sleep=time.sleep
    )
    control.pace()
    control.checkpoint()
    assert sent[-1] == [0.0, 0.0, 0.75]
    time.now += 0.1
    assert control.pace() == pytest.approx(0.3)  # 0.1 s of work at 25 %: 0.3 s idle
    state[0] = (None, None, 1.0)
    control.checkpoint()
    time.now += 0.1
    assert control.pace() == 0.0 and control.duty == 1.0


def test_a_reader_without_a_throttle_may_leave_the_duty_out():
    control = WorkerControl(lambda: (None, None), lambda t: (None, None))  # Tune's trials
    control.checkpoint()
    assert control.duty == 1.0 and not control.stop_requested
