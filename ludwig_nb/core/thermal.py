"""A GPU's thermal headroom from whatever its driver offers (pure; no driver here).

NVML describes the same protection points in two units:

* **absolute °C** from ``nvmlDeviceGetTemperatureThreshold`` (slowdown, shutdown, GPU max
  operating, memory max). NVIDIA's documentation says this call is no longer the preferred
  way on Ada and later GPUs and that it will stop answering there.
* **T.Limit units** from the ``NVML_FI_DEV_TEMPERATURE_*_TLIMIT`` field values: where each
  point sits on the thermal margin's own scale, as signed offsets (an H100 slows down in
  hardware at -2, its maximum operating point is 0; GPUs of the older "absolute" model, an
  A100 for one, answer NOT_SUPPORTED).

``nvmlDeviceGetMarginTemperature`` reads the margin itself: °C of headroom before the GPU
first slows its clocks for heat (nvidia-smi's "GPU T.Limit Temp"). Where one of the three is
missing it follows from the other two and the temperature: a point known in both units fixes
the **reference** (the temperature at margin 0, ``absolute + tlimit``), and then
``margin = reference - temperature`` and ``absolute = reference - tlimit``. With the legacy
thresholds only, the reference is the nearest slowdown point (the lower of the GPU's maximum
operating and slowdown temperatures), which is what the margin measures on newer GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ABSOLUTE_FIELDS",
    "THERMAL_POINTS",
    "absolute_thresholds",
    "describe_margin",
    "margin_from_reference",
    "reference_temperature",
]

#: the protection points, by our name
THERMAL_POINTS = ("shutdown", "slowdown", "memory_max", "gpu_max")
#: the GpuSample field holding each point in °C
ABSOLUTE_FIELDS = {
    "shutdown": "temperature_shutdown",
    "slowdown": "temperature_slowdown",
    "memory_max": "temperature_memory_max",
    "gpu_max": "temperature_max",
}
#: points measured on the GPU's own sensor (memory_max is the memory's: it cannot anchor)
_GPU_POINTS = ("gpu_max", "slowdown", "shutdown")


def reference_temperature(
    absolute: Mapping[str, float | None],
    tlimit: Mapping[str, float | None],
    temperature: float | None = None,
    margin: float | None = None,
) -> float | None:
    """The temperature (°C) at which the margin is 0, or None when nothing fixes it.

    In order: a point known in both units (``absolute + tlimit``); the temperature plus the
    margin read at the same moment; the lower of the absolute GPU-max and slowdown points.
    """
    for point in _GPU_POINTS:
        high, offset = absolute.get(point), tlimit.get(point)
        if high is not None and offset is not None:
            return float(high) + float(offset)
    if temperature is not None and margin is not None:
        return float(temperature) + float(margin)
    nearest = [float(v) for p in ("gpu_max", "slowdown") if (v := absolute.get(p)) is not None]
    return min(nearest) if nearest else None


def margin_from_reference(reference: float | None, temperature: float | None) -> float | None:
    """°C of headroom at ``temperature`` below ``reference`` (None when either is unknown)."""
    if reference is None or temperature is None:
        return None
    return float(reference) - float(temperature)


def absolute_thresholds(
    absolute: Mapping[str, float | None],
    tlimit: Mapping[str, float | None],
    reference: float | None,
) -> dict[str, float | None]:
    """Every point in °C: the absolute reading, else ``reference - tlimit``, else None."""
    out: dict[str, float | None] = {}
    for point in THERMAL_POINTS:
        value = absolute.get(point)
        offset = tlimit.get(point)
        if value is None and offset is not None and reference is not None:
            value = float(reference) - float(offset)
        out[point] = None if value is None else float(value)
    return out


def describe_margin(margin: float) -> str:
    """``"6 °C to slowdown"``, ``"at its slowdown point"`` or ``"3 °C past slowdown"``."""
    if margin >= 0.5:
        return f"{margin:.0f} °C to slowdown"
    if margin > -0.5:
        return "at its slowdown point"
    return f"{-margin:.0f} °C past slowdown"
