"""A GPU's thermal headroom through NVML, degrading one source at a time.

The margin comes from ``nvmlDeviceGetMarginTemperature`` where it answers, else it follows
from the ``NVML_FI_DEV_TEMPERATURE_*_TLIMIT`` field values and the legacy thresholds, else
from the legacy thresholds alone (``core/thermal.py`` says how). The absolute thresholds come
from ``nvmlDeviceGetTemperatureThreshold`` where it answers, else from the T.Limit fields and
the margin. The fields and the thresholds are read once per device; the margin every tick.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ludwig_nb.core.thermal import (
    ABSOLUTE_FIELDS,
    absolute_thresholds,
    margin_from_reference,
    reference_temperature,
)
from ludwig_nb.gpu.nvml_calls import Call, optional
from ludwig_nb.gpu.nvml_fields import field_ids, read_fields

__all__ = ["ThermalReader"]

#: our point -> the pynvml names of its T.Limit field and of its legacy threshold
_TLIMIT = {
    "shutdown": "NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT",
    "slowdown": "NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT",
    "memory_max": "NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT",
    "gpu_max": "NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT",
}
_LEGACY = {
    "shutdown": "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",
    "slowdown": "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN",
    "memory_max": "NVML_TEMPERATURE_THRESHOLD_MEM_MAX",
    "gpu_max": "NVML_TEMPERATURE_THRESHOLD_GPU_MAX",
}


class ThermalReader:
    """One GPU's thresholds (read once) and margin (every tick).

    Args:
        nvml: The ``pynvml`` module.
        handle: The GPU's NVML handle.
        call: Calls one metric of this device, degrading on its own.
    """

    def __init__(self, nvml: ModuleType, handle: Any, call: Call) -> None:
        self._nvml, self._handle, self._call = nvml, handle, call
        self.absolute: dict[str, float | None] = {}
        self.tlimit: dict[str, float | None] = {}
        self.reference: float | None = None
        self.sources: dict[str, str] = {}
        self._static_read = False

    def read(self, temperature: float | None) -> dict[str, Any]:
        """The margin and the four thresholds (°C) at ``temperature`` (°C, this tick's)."""
        if not self._static_read:
            self._read_static()
        margin = self._margin()
        if margin is not None:
            self.sources["margin"] = "nvmlDeviceGetMarginTemperature"
            if self.reference is None and temperature is not None:
                self.reference = temperature + margin  # fixes the thresholds the fields give
        else:
            margin = margin_from_reference(self.reference, temperature)
            if margin is not None:
                self.sources.setdefault("margin", self._derived_from())
        points = absolute_thresholds(self.absolute, self.tlimit, self.reference)
        fields: dict[str, Any] = {ABSOLUTE_FIELDS[p]: v for p, v in points.items()}
        fields["temperature_margin"] = margin
        return fields

    def _margin(self) -> float | None:
        nvml, h = self._nvml, self._handle
        value = self._call("margin", lambda: optional(nvml, "nvmlDeviceGetMarginTemperature")(h))
        return None if value is None else float(value)

    def _derived_from(self) -> str:
        if any(v is not None for v in self.tlimit.values()):
            return "derived from the T.Limit fields and the thresholds"
        return "derived from the thresholds"

    def _read_static(self) -> None:
        self._static_read = True
        self.tlimit = self._read_tlimit()
        nvml, h = self._nvml, self._handle
        get = nvml.nvmlDeviceGetTemperatureThreshold
        for point, name in _LEGACY.items():
            which = getattr(nvml, name, None)
            value = None if which is None else self._call(f"threshold_{point}", get, h, which)
            self.absolute[point] = None if value is None else float(value)
        self.reference = reference_temperature(self.absolute, self.tlimit)
        if any(v is not None for v in self.absolute.values()):
            self.sources["thresholds"] = "nvmlDeviceGetTemperatureThreshold"
        elif any(v is not None for v in self.tlimit.values()):
            self.sources["thresholds"] = "derived from the T.Limit fields and the margin"

    def _read_tlimit(self) -> dict[str, float | None]:
        ids = field_ids(self._nvml, _TLIMIT.values())
        if not ids:
            return {}
        wanted = list(ids.values())
        read = self._call("tlimit_fields", read_fields, self._nvml, self._handle, wanted)
        if read is None:
            return {}
        out = {point: read.values.get(ids[name]) for point, name in _TLIMIT.items() if name in ids}
        if any(v is not None for v in out.values()):
            self.sources["tlimit"] = "nvmlDeviceGetFieldValues (T.Limit fields)"
        return out
