"""``HostSource``: the host's CPU and RAM through psutil (always available)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ludwig_nb.core.gpu_sample import HostSample

__all__ = ["HostSource"]

log = logging.getLogger(__name__)


class HostSource:
    """CPU % (all cores, since the previous call) and RAM (bytes). Thread-safe.

    psutil is imported on the first ``sample()``; ``sample()`` never raises (a failure gives
    a sample of ``None`` values).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._primed = False

    def sample(self) -> HostSample:
        now = self._clock()
        with self._lock:
            try:
                import psutil

                if not self._primed:  # the first cpu_percent(None) call is always 0.0
                    psutil.cpu_percent(interval=None)
                    self._primed = True
                cpu = float(psutil.cpu_percent(interval=None))
                memory = psutil.virtual_memory()
            except Exception as exc:
                log.debug("host sampling failed: %s", exc)
                return HostSample(time=now)
        return HostSample(
            time=now,
            cpu_percent=cpu,
            memory_used=int(memory.total - memory.available),
            memory_total=int(memory.total),
        )
