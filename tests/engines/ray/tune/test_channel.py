"""The search's channel actor's logic, driven on an asyncio loop as the actor runs it (no Ray)."""

from __future__ import annotations

import asyncio

from ludwig_nb.engines.ray.tune.channel import TuneChannel


def test_the_channel_carries_assignments_events_control_and_the_end_per_trial():
    async def scenario():
        channel = TuneChannel()
        assert await channel.assignment("t1", 0.01) is None  # not assigned yet: waited, None
        waiting = asyncio.ensure_future(channel.assignment("t1", 5.0))
        await channel.assign("t1", {"run_dir": "/r/1"})
        assert await waiting == {"run_dir": "/r/1"}
        await channel.push("t1", ["a", "b"])
        await channel.push("t2", ["other"])
        events, cursor, ended, error = await channel.poll("t1", 0, 1.0)
        assert (events, cursor, ended, error) == (["a", "b"], 2, False, None)
        await channel.push("t1", ["c"])
        assert (await channel.poll("t1", cursor, 1.0))[:2] == (["c"], 3)  # acknowledged ones go
        assert (await channel.poll("t1", 3, 0.01))[:2] == ([], 3)
        await channel.set_control("t1", "pruned", None)
        await channel.set_control("t1", None, "user")  # a later pause never clears a stop
        assert await channel.control("t1") == ("pruned", "user")
        assert await channel.control("t2") == (None, None)
        await channel.end("t1", "ValueError: boom")
        await channel.end("t1", None)  # the driver's end after the trial's keeps the error
        assert (await channel.poll("t1", 3, 1.0))[2:] == (True, "ValueError: boom")

    asyncio.run(scenario())
