"""Every rank's heartbeat to the run's channel: steps, rate, device, and its node's GPUs.

Each Ray Train worker runs a :class:`Heartbeat` thread that pushes one small report about
once a second (fire-and-forget, like rank 0's events): rank, host, Ray node id, device,
the GPU it trains on (its NVML index on that host, from ``CUDA_VISIBLE_DEVICES``), steps
done, recent steps/s and the idle time the throttle inserted. The node's local rank 0
also reads the node's GPUs through NVML (:class:`~ludwig_nb.gpu.nvml.NvmlSource`, the
same code as the kernel's sampler) and the host's CPU/RAM, and attaches that snapshot:
one reader per node, however many ranks share it. The driver merges the nodes' snapshots
(gpu_view.py) into the run's GPU view, on which the gauges and alarms work.
"""

from __future__ import annotations

import collections
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.gpu_sample import Snapshot

__all__ = ["HEARTBEAT_S", "Heartbeat", "StepCounter", "identity", "node_reader", "physical_gpu"]

HEARTBEAT_S = 1.0  # seconds between two reports of one rank
_RATE_WINDOW = 32  # steps the rate is measured over


class StepCounter:
    """Wraps a rank's ``emit``: the steps it has done and their recent end times.

    A resumed run counts from its first step. Thread-safe: the heartbeat thread reads it.

    Args:
        emit: The rank's own emit, which every event goes on to.
    """

    def __init__(self, emit: Callable[[ev.Event], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self.steps = 0
        self._times: collections.deque[float] = collections.deque(maxlen=_RATE_WINDOW)

    def __call__(self, event: ev.Event) -> None:
        """Count ``event`` when it is a step, then forward it."""
        if isinstance(event, ev.StepFinished):
            with self._lock:
                self.steps = event.step + 1  # steps done, counted from the run's start
                self._times.append(event.time)
        self._emit(event)

    def flush(self) -> None:
        """Flush the wrapped emit when it batches (rank 0's)."""
        flush = getattr(self._emit, "flush", None)
        if flush is not None:
            flush()

    def rate(self, now: float) -> float | None:
        """Steps per second over the recent steps.

        Args:
            now: Wall-clock seconds.

        Returns:
            The rate (steps/s); 0.0 once no step ended for 5 mean step times (and at
            least 2 s); None before two steps.
        """
        with self._lock:
            times = list(self._times)
        if len(times) < 2 or times[-1] <= times[0]:
            return None
        mean = (times[-1] - times[0]) / (len(times) - 1)
        if now - times[-1] > max(2.0, 5 * mean):
            return 0.0
        return round(1.0 / mean, 3)


def physical_gpu(device: Any, visible: str | None) -> int | str | None:
    """The GPU a rank trains on, as NVML knows it.

    NVML ignores ``CUDA_VISIBLE_DEVICES``; torch's ``cuda:i`` counts inside it.

    Args:
        device: The rank's torch device.
        visible: ``CUDA_VISIBLE_DEVICES`` (None: every GPU visible).

    Returns:
        Its index on the host (an int), its UUID (a str) when ``visible`` names GPUs by
        UUID, or None on CPU.
    """
    if getattr(device, "type", "cpu") != "cuda":
        return None
    index = device.index or 0
    names = [n.strip() for n in (visible or "").split(",") if n.strip()]
    if index >= len(names):
        return index
    return int(names[index]) if names[index].isdigit() else names[index]


class Heartbeat:
    """One rank's reporting thread.

    Args:
        push: Sends one report; must not block (fire-and-forget).
        identity: What the rank is (see :func:`identity`).
        steps: The rank's step counter.
        read_node: Reads the node's snapshot; None: this rank reads no GPUs.
        idle: The throttle's idle seconds so far.
        interval: Seconds between reports.
        clock: Wall-clock seconds.
    """

    def __init__(
        self,
        push: Callable[[dict[str, Any]], None],
        identity: dict[str, Any],
        steps: StepCounter,
        read_node: Callable[[], Snapshot] | None,
        idle: Callable[[], float],
        interval: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._push, self._identity, self._steps = push, identity, steps
        self._read_node, self._idle = read_node, idle
        self._interval, self._clock = interval, clock
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0

    def report(self) -> dict[str, Any]:
        """This rank's report now (the node's snapshot included on the node's reader)."""
        now = self._clock()
        report = {
            **self._identity,
            "steps": self._steps.steps,
            "time": now,
            "steps_per_s": self._steps.rate(now),
            "idle_s": round(self._idle(), 3),
        }
        if self._read_node is not None:
            report["snapshot"] = self._read_node().to_dict()
        return report

    def beat(self) -> None:
        """Push one report; a failure is dropped (the next beat comes in a second)."""
        try:
            self._push(self.report())
            self.sent += 1
        except Exception:  # a heartbeat never fails a run
            return

    def start(self) -> Heartbeat:
        """Start the reporting thread; returns self."""
        self._thread = threading.Thread(target=self._loop, name="ludwig_nb-heartbeat", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and push a last report (the final step count)."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.beat()

    def _loop(self) -> None:
        while not self._stopped.wait(self._interval):
            self.beat()


def node_reader() -> Callable[[], Snapshot]:
    """A function reading this node's GPUs (NVML) and host (psutil) into a snapshot."""
    from ludwig_nb.gpu.host import HostSource
    from ludwig_nb.gpu.nvml import NvmlSource

    gpus, host = NvmlSource(), HostSource()

    def read() -> Snapshot:
        samples = gpus.sample()
        reason = "" if samples else (gpus.reason or "no GPU found")
        return Snapshot(time=time.time(), gpus=tuple(samples), host=host.sample(), reason=reason)

    return read


def identity(rank: int, local_rank: int, device: Any) -> dict[str, Any]:
    """What a rank is: rank, local rank, host, Ray node id, device text, physical GPU."""
    node_id = "local"
    try:
        import ray

        if ray.is_initialized():
            node_id = ray.get_runtime_context().get_node_id()
    except Exception:  # local mode: no Ray
        node_id = "local"
    gpu = physical_gpu(device, os.environ.get("CUDA_VISIBLE_DEVICES"))
    return {
        "rank": rank,
        "local_rank": local_rank,
        "host": socket.gethostname(),
        "node_id": node_id,
        "device": str(device),
        "pid": os.getpid(),
        "gpu": gpu if isinstance(gpu, int) else None,
        "gpu_uuid": gpu if isinstance(gpu, str) else None,
    }
