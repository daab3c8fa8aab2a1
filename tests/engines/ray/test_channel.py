"""The channel's pieces that need no Ray: rank 0's batching emit (time injected), the
in-process channel of local mode (cursor, trimming, control, reports)."""

from __future__ import annotations

from ludwig_nb.core import events as ev
from ludwig_nb.engines.ray.channel import (
    ChannelClient,
    EventBatcher,
    LocalChannel,
    register_local_channel,
    unregister_local_channel,
)


def step(n: int) -> ev.StepFinished:
    return ev.StepFinished(
        time=float(n),
        step=n,
        epoch=0,
        start_time=float(n),
        batch_size=4,
        loss=1.0,
        learning_rate=0.1,
    )


def test_steps_are_batched_until_the_interval_and_other_events_push_at_once():
    now = [0.0]
    pushed: list[list] = []
    batcher = EventBatcher(pushed.append, interval=0.2, clock=lambda: now[0])
    batcher(step(0))
    now[0] = 0.1
    batcher(step(1))
    assert pushed == []  # within the interval: queued
    now[0] = 0.25
    batcher(step(2))
    assert [[e.step for e in b] for b in pushed] == [[0, 1, 2]]
    batcher(step(3))
    batcher(ev.PhaseChanged(time=1.0, phase="evaluating"))  # not a step: pushes at once
    assert [e.type for e in pushed[-1]] == ["step_finished", "phase_changed"]
    batcher.flush()
    assert len(pushed) == 2  # nothing queued, nothing pushed


def test_the_local_channel_returns_what_is_new_and_frees_what_was_read():
    channel = LocalChannel()
    channel.push([step(0), step(1)])
    events, cursor = channel.poll(0, timeout=0)
    assert ([e.step for e in events], cursor) == ([0, 1], 2)
    channel.push([step(2)])
    events, cursor = channel.poll(cursor, timeout=0)
    assert ([e.step for e in events], cursor) == ([2], 3)
    assert channel.poll(cursor, timeout=0) == ([], 3)
    assert channel._store.events == []  # acknowledged events are dropped


def test_control_errors_and_reports_reach_the_other_side_by_the_run_s_name():
    channel = register_local_channel("run-x")
    try:
        client = ChannelClient("run-x")  # found by name, as a Ray worker finds the actor
        channel.set_control("user", None, 0.5)
        assert client.control_nowait() == ("user", None, 0.5)
        assert (client.started(0), client.started(0), client.started(1)) == (1, 2, 1)
        client.report_worker({"rank": 1, "steps": 3})
        client.report_worker({"rank": 0, "steps": 3})
        assert [w["rank"] for w in channel.workers()] == [0, 1]
        client.report_error({"rank": 1, "message": "boom"})
        assert channel.errors() == [{"rank": 1, "message": "boom"}]
        client.push([step(0)])
        assert channel.poll(0, 0)[1] == 1
    finally:
        unregister_local_channel("run-x")


def test_heartbeats_keep_each_rank_s_latest_and_one_rank_reads_each_node():
    channel = register_local_channel("run-y")
    try:
        client = ChannelClient("run-y")
        client.heartbeat({"rank": 1, "steps": 2})
        client.heartbeat({"rank": 0, "steps": 3})
        client.heartbeat({"rank": 1, "steps": 4})
        assert channel.heartbeats() == [{"rank": 0, "steps": 3}, {"rank": 1, "steps": 4}]
        assert client.claim_node("node-a", 1) is True
        assert client.claim_node("node-a", 0) is False  # node-a has its reader
        assert client.claim_node("node-a", 1) is True  # the same rank after a restart
        assert client.claim_node("node-b", 0) is True
    finally:
        unregister_local_channel("run-y")
