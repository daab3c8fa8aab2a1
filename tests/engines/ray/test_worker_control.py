"""WorkerControl: what rank 0 reads becomes every rank's decision through ``agree``."""

from __future__ import annotations

import pytest

from ludwig_nb.core.control import StopRequested
from ludwig_nb.engines.ray.worker_control import WorkerControl


def test_a_stop_read_by_rank_0_raises_at_the_boundary():
    state = [(None, None)]
    control = WorkerControl(lambda: state[0], lambda t: state[0])
    control.checkpoint()
    state[0] = ("alarm:hot", None)
    with pytest.raises(StopRequested, match="alarm:hot"):
        control.checkpoint()
    assert (control.stop_requested, control.stop_reason) == (True, "alarm:hot")


def test_another_rank_stops_because_the_all_reduce_says_so():
    agreed = [[0.0, 0.0]]
    control = WorkerControl(lambda: (None, None), lambda t: (None, None),
                            agree=lambda values: agreed[0])  # fmt: skip
    control.checkpoint()
    agreed[0] = [1.0, 0.0]  # rank 0 contributed the stop
    with pytest.raises(StopRequested):
        control.checkpoint()


def test_pause_waits_in_agreement_until_every_rank_sees_the_resume():
    reads = iter([("", "user"), (None, "user"), (None, "user"), (None, None)])
    sent: list[list[float]] = []

    def agree(values):
        sent.append(values)
        return values

    control = WorkerControl(lambda: next(reads), lambda t: next(reads), agree=agree)
    control.checkpoint()
    assert control.paused
    log: list[str] = []
    control.wait_while_paused(on_pause=lambda r: log.append(f"pause {r}"),
                              on_resume=lambda r: log.append(f"resume {r}"))  # fmt: skip
    assert log == ["pause user", "resume user"]
    assert len(sent) == 4  # one agreement per poll while paused: the ranks stay in step
    assert not control.paused
