"""The server-side GPU feed: lazy start off the event loop, cached reads, stop at shutdown."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.server.gpu_feed import GpuFeed
from ludwig_nb.server.handlers import FEED_KEY


class _Source:
    def __init__(self, available: bool, reason: str | None = None) -> None:
        self.available = available
        self.reason = reason


class _Sampler:
    """Stands in for ludwig_nb.gpu.Sampler: a latest-value slot, no thread of its own."""

    def __init__(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot
        self.started_in: str | None = None
        self.stopped = False

    def start(self) -> None:
        self.started_in = threading.current_thread().name

    def stop(self) -> None:
        self.stopped = True

    def latest(self) -> Snapshot | None:
        return self.snapshot


SNAPSHOT = Snapshot(
    time=1000.0,
    gpus=(
        GpuSample(
            index=0,
            name="Fake H100",
            temperature=81.0,
            temperature_slowdown=87.0,
            clock_reasons=("sw_power_cap",),
            memory_used=1 << 30,
            memory_total=80 << 30,
        ),
    ),
    host=HostSample(time=1000.0, cpu_percent=12.5, memory_used=1 << 30, memory_total=4 << 30),
)


@pytest.fixture
def fake_feed(jp_serverapp: Any) -> tuple[GpuFeed, _Sampler, list[str]]:
    sampler = _Sampler(SNAPSHOT)
    built_in: list[str] = []

    def factory() -> tuple[_Sampler, _Source]:
        built_in.append(threading.current_thread().name)
        return sampler, _Source(True)

    feed = GpuFeed(factory)
    jp_serverapp.web_app.settings[FEED_KEY] = feed
    return feed, sampler, built_in


async def test_first_request_starts_the_sampler_off_the_event_loop(jp_fetch, fake_feed):
    feed, sampler, built_in = fake_feed
    assert not feed.started  # nothing at load time
    body = json.loads((await jp_fetch("ludwig-nb", "gpus")).body)
    loop_thread = threading.current_thread().name
    assert built_in and built_in[0] != loop_thread
    assert sampler.started_in not in (None, loop_thread)
    assert body["available"] is True and body["reason"] is None
    [gpu] = body["gpus"]
    assert gpu["name"] == "Fake H100" and gpu["temperature_slowdown"] == 87.0
    assert gpu["clock_reasons"] == ["sw_power_cap"]
    assert body["host"]["cpu_percent"] == 12.5 and body["time"] == 1000.0
    await jp_fetch("ludwig-nb", "gpus")
    assert len(built_in) == 1  # started once


async def test_server_cleanup_stops_the_sampler(jp_fetch, jp_serverapp, fake_feed):
    feed, sampler, _ = fake_feed
    await jp_fetch("ludwig-nb", "gpus")
    await jp_serverapp.cleanup_extensions()
    assert sampler.stopped and not feed.started


def test_a_failing_factory_reports_unavailable_and_does_not_retry():
    calls: list[int] = []

    def factory() -> Any:
        calls.append(1)
        raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    feed = GpuFeed(factory)
    feed.start()
    feed.start()
    snap = feed.snapshot()
    assert snap["available"] is False and snap["gpus"] == [] and snap["host"] is None
    assert "libnvidia-ml.so.1" in snap["reason"]
    assert calls == [1]


def test_no_gpu_source_still_reports_the_host():
    host_only = Snapshot(time=5.0, host=HostSample(time=5.0, cpu_percent=3.0), reason="no driver")
    feed = GpuFeed(lambda: (_Sampler(host_only), _Source(False, None)))
    feed.start()
    snap = feed.snapshot()
    assert snap["available"] is False and snap["reason"] == "no driver"
    assert snap["host"]["cpu_percent"] == 3.0


def test_snapshot_before_the_first_sample_is_empty():
    feed = GpuFeed(lambda: (_Sampler(None), _Source(True)))
    feed.start()
    assert feed.snapshot()["gpus"] == [] and feed.snapshot()["time"] is None


def test_close_before_start_prevents_starting():
    sampler = _Sampler(SNAPSHOT)
    feed = GpuFeed(lambda: (sampler, _Source(True)))
    feed.close()
    feed.start()
    assert sampler.started_in is None and not feed.started


def test_real_sampler_over_nvml_and_host():
    """The default factory: ludwig_nb.gpu's Sampler over NvmlSource + HostSource (a thread)."""
    from ludwig_nb.server.gpu_feed import default_sampler_factory

    ticked = threading.Event()
    made = []

    def factory() -> Any:
        sampler, source = default_sampler_factory(interval=0.25)
        sampler.subscribe(lambda snapshot: ticked.set())
        made.append(sampler)
        return sampler, source

    feed = GpuFeed(factory)
    try:
        feed.start()
        assert ticked.wait(10), "the sampler thread produced no snapshot"
        snap = feed.snapshot()
    finally:
        feed.close()
    assert snap["host"] is not None and snap["host"]["memory_total"] > 0
    assert snap["available"] == bool(snap["gpus"])
    if not snap["available"]:  # this machine: no NVIDIA driver
        assert snap["reason"]
    # its own sampler thread is gone (other tests' kernel samplers may still run)
    assert made and not made[0].running
