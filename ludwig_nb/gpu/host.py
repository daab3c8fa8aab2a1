"""``HostSource``: the host's CPU and RAM through psutil (always available)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.core.gpu_sample import HostSample

__all__ = ["HostSource"]

log = logging.getLogger(__name__)


class HostSource:
    """CPU and RAM of the host and of this process.

    CPU % (all cores, since the previous call) and RAM (bytes), and the same for this process (CPU %
    of all cores, resident bytes). Thread-safe.

    psutil is imported on the first ``sample()``; ``sample()`` never raises (a failure gives
    a sample of ``None`` values).

    Args:
        clock: Wall-clock seconds for the sample times.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._primed = False
        self._process: Any = None

    def sample(self) -> HostSample:
        """Read the host and this process now (None fields where psutil is missing or fails)."""
        now = self._clock()
        with self._lock:
            try:
                import psutil

                if not self._primed:  # the first cpu_percent(None) call is always 0.0
                    psutil.cpu_percent(interval=None)
                    self._process = psutil.Process()
                    self._process.cpu_percent(interval=None)
                    self._primed = True
                cpu = float(psutil.cpu_percent(interval=None))
                memory = psutil.virtual_memory()
                process_cpu, rss = self._process_usage(psutil.cpu_count() or 1)
            except Exception as exc:
                log.debug("host sampling failed: %s", exc)
                return HostSample(time=now)
        return HostSample(
            time=now,
            cpu_percent=cpu,
            memory_used=int(memory.total - memory.available),
            memory_total=int(memory.total),
            process_cpu_percent=process_cpu,
            process_rss=rss,
        )

    def _process_usage(self, cores: int) -> tuple[float | None, int | None]:
        """This process's CPU (% of all cores, so 0..100 like the host's) and RSS bytes."""
        try:
            with self._process.oneshot():
                cpu = float(self._process.cpu_percent(interval=None)) / cores
                rss = int(self._process.memory_info().rss)
        except Exception as exc:  # a sandbox without /proc/self access
            log.debug("process sampling failed: %s", exc)
            return None, None
        return cpu, rss
