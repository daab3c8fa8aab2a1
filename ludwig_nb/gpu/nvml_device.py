"""One NVML device as ``NvmlSource`` keeps it: its handle, what it refused, its readers.

:class:`DeviceCalls` hands the readers (``nvml_thermal``, ``nvml_counters``) the source's
degrade-one-metric call for one device; :func:`device_support` says which source each of
its readings comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ludwig_nb.gpu.gpm import GpmReader
from ludwig_nb.gpu.nvml_counters import CounterReader
from ludwig_nb.gpu.nvml_thermal import ThermalReader

__all__ = ["Device", "DeviceCalls", "device_support"]


class Device:
    """One physical GPU or MIG instance: its handle, static info and capability map."""

    def __init__(self, index: int, handle: Any, mig_index: int | None = None) -> None:
        self.index = index
        self.handle = handle
        self.mig_index = mig_index
        self.unsupported: set[str] = set()
        self.lost = False
        self.static: dict[str, Any] = {}
        self.gpm: GpmReader | None = None
        self.thermal: ThermalReader | None = None
        self.counters: CounterReader | None = None


class DeviceCalls:
    """``call(metric, fn, *args)`` for one device (the ``nvml_calls.Call`` protocol).

    Args:
        call: The source's ``call(device, metric, fn, *args)``.
        dev: The device.
    """

    def __init__(self, call: Callable[..., Any], dev: Device) -> None:
        self._call, self._dev = call, dev

    def __call__(self, metric: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` for this device, or None when ``metric`` failed."""
        return self._call(self._dev, metric, fn, *args)

    def gone(self, metric: str) -> bool:
        """Whether ``metric`` failed for good on this device."""
        return metric in self._dev.unsupported


def device_support(dev: Device) -> dict[str, Any]:
    """Which source each of ``dev``'s readings comes from (``"absent"`` where none)."""
    thermal = {} if dev.thermal is None else dev.thermal.sources
    gpm = None if dev.gpm is None else dev.gpm.supported
    return {
        "index": dev.index,
        "mig_index": dev.mig_index,
        "name": dev.static.get("name"),
        "margin": thermal.get("margin", "absent"),
        "thresholds": thermal.get("thresholds", "absent"),
        "tlimit_fields": thermal.get("tlimit", "absent"),
        "counters": {} if dev.counters is None else dev.counters.sources(),
        "gpm": "absent" if not gpm else "nvmlGpmMetricsGet",
        "unsupported": sorted(dev.unsupported),
    }
