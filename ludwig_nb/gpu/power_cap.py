"""``PowerCap``: set a GPU's board power limit, and always put the original one back.

``nvmlDeviceSetPowerManagementLimit`` needs root (or the ``SYS_ADMIN`` capability); an
unprivileged process gets ``NVML_ERROR_NO_PERMISSION``. :meth:`PowerCap.apply` never
raises: it returns "" when the cap is set, else one line saying why not (the caller then
holds the power by duty cycling instead). The original limit of every device it changed
is recorded before the first change and restored by :meth:`PowerCap.restore`: at the end
of the run, after a crash (the run layer calls it from its finish callback) and at
interpreter exit (``atexit``). The limit is not persistent across driver reloads anyway.
"""

from __future__ import annotations

import atexit
import logging
import threading
from types import ModuleType
from typing import Any

__all__ = ["NO_PERMISSION_HINT", "PowerCap"]

log = logging.getLogger(__name__)

NO_PERMISSION_HINT = (
    "setting a GPU power limit needs root or the SYS_ADMIN capability "
    "(docker run --cap-add SYS_ADMIN)"
)


class PowerCap:
    """Caps the power limit of GPUs by index.

    Thread-safe; ``nvml``: the ``pynvml`` module (default: imported lazily on the first
    :meth:`apply`).
    """

    def __init__(self, nvml: ModuleType | None = None) -> None:
        self._nvml = nvml
        self._lock = threading.Lock()
        self._original: dict[int, int] = {}  # device index -> mW before the first change
        self._initialised = False
        self._atexit = False

    @property
    def capped(self) -> dict[int, int]:
        """Device index -> the original limit (mW) of every device capped now."""
        with self._lock:
            return dict(self._original)

    def apply(self, index: int, watts: float) -> str:
        """Set GPU ``index``'s power limit to ``watts`` W (clamped to the card's allowed range).

        Returns "" on success, else why not in one line.
        """
        with self._lock:
            try:
                nvml = self._init()
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                low, high = nvml.nvmlDeviceGetPowerManagementLimitConstraints(handle)
                wanted = int(min(max(watts * 1000.0, low), high))
                original = self._original.get(index)
                if original is None:
                    original = int(nvml.nvmlDeviceGetPowerManagementLimit(handle))
                nvml.nvmlDeviceSetPowerManagementLimit(handle, wanted)
            except Exception as exc:
                return _why(exc, self._nvml)
            self._original.setdefault(index, original)
            if not self._atexit:
                atexit.register(self.restore)
                self._atexit = True
        log.info(
            "GPU %d power limit set to %.0f W (was %.0f W)", index, wanted / 1000, original / 1000
        )
        return ""

    def restore(self) -> list[str]:
        """Put back every original limit (idempotent).

        Returns the problems, one line each (also logged); a device that cannot be restored is
        forgotten, not retried.
        """
        with self._lock:
            original, self._original = self._original, {}
            problems = []
            for index, limit in original.items():
                try:
                    nvml = self._init()
                    nvml.nvmlDeviceSetPowerManagementLimit(
                        nvml.nvmlDeviceGetHandleByIndex(index), limit
                    )
                except Exception as exc:
                    problems.append(
                        f"GPU {index}: could not restore {limit / 1000:.0f} W "
                        f"({_why(exc, self._nvml)})"
                    )
        for problem in problems:
            log.warning("ludwig_nb: %s", problem)
        return problems

    def _init(self) -> Any:
        # NVML counts nvmlInit calls; this one is never shut down, so that a sampler's
        # NvmlSource in the same process keeps its session.
        if self._nvml is None:
            import pynvml

            self._nvml = pynvml
        if not self._initialised:
            self._nvml.nvmlInit()
            self._initialised = True
        return self._nvml


def _why(exc: Exception, nvml: ModuleType | None) -> str:
    """Why NVML refused, in one line (``nvml``: pynvml, once imported)."""
    if nvml is not None and getattr(exc, "value", None) == nvml.NVML_ERROR_NO_PERMISSION:
        return f"no permission: {NO_PERMISSION_HINT}"
    if isinstance(exc, ImportError):
        return "nvidia-ml-py is not installed"
    return f"{type(exc).__name__}: {exc}".strip()
