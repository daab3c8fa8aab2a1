"""The "resources" line of a run's end-of-run summary: energy, peak memory, time throttled.

Pure: it formats ``run.profile_summary`` (``core.resource_profile.summarize``); a figure
the hardware did not report is left out, and with nothing to say the line is empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.formatting import format_bytes, format_duration

__all__ = ["resources_line"]


def _energy(joules: float) -> str:
    return f"{joules / 1000:.3g} kJ" if joules >= 1000 else f"{joules:.3g} J"


def resources_line(summary: Mapping[str, Any] | None) -> str:
    """The resource profile summary as one line.

    ``"resources: 12.3 kJ (0.41 J/sample) · GPU peak 9.0 GiB · RSS peak 410 MiB · throttled 7 %
    of the run (thermal 5 %, power cap 2 %)"``; ``""`` without a profile. A profile from before
    the per-cause figures says the seconds throttled by power and by heat instead.
    """
    if not isinstance(summary, Mapping) or not summary:
        return ""
    parts: list[str] = []
    energy = summary.get("energy_j")
    if energy is not None:
        per = summary.get("j_per_sample")
        parts.append(_energy(energy) + (f" ({per:.3g} J/sample)" if per else ""))
    if summary.get("peak_gpu_memory") is not None:
        parts.append(f"GPU peak {format_bytes(summary['peak_gpu_memory'])}")
    rss = (summary.get("host") or {}).get("peak_rss")
    if rss is not None:
        parts.append(f"RSS peak {format_bytes(rss)}")
    if summary.get("peak_temperature") is not None:
        parts.append(f"max {summary['peak_temperature']:.0f} °C")
    throttle = summary.get("throttle")
    power, thermal = summary.get("throttled_power_s"), summary.get("throttled_thermal_s")
    if isinstance(throttle, Mapping) and throttle.get("text"):
        parts.append(str(throttle["text"]))
    elif power is not None or thermal is not None:
        total = (power or 0.0) + (thermal or 0.0)
        detail = [
            f"{k} {format_duration(v)}" for k, v in (("power", power), ("heat", thermal)) if v
        ]
        parts.append(
            f"throttled {format_duration(total)}" + (f" ({', '.join(detail)})" if detail else "")
        )
    if summary.get("steps_per_s"):
        parts.append(f"{summary['steps_per_s']:.3g} steps/s")
    return "resources: " + " · ".join(parts) if parts else ""
