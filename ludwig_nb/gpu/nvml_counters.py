"""The time a GPU's clocks were held down, per cause: NVML's cumulative counters.

Preferred: the ``NVML_FI_DEV_CLOCKS_EVENT_REASON_*`` field values (one call for all of them);
else the deprecated ``nvmlDeviceGetViolationStatus`` (power, thermal and sync boost only).
Both count nanoseconds since the driver loaded (``nvmlViolationTime_t.violationTime`` "in
Nanoseconds"; the field values are the same counters); we hand on seconds.

The field ids of the three slowdown counters moved between driver branches (nvidia-smi 580
reads them at 251-253, the CUDA 13 header and nvidia-ml-py 13.615 name 269-271, which the
580 driver gives to power smoothing), so a counter is trusted only while it behaves like
one: it never grows faster than the wall clock, and it grows while its clock event reason
is set. A field that fails either test is dropped for the next candidate (the older
``PERF_POLICY`` id, then the violation status).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from ludwig_nb.gpu.nvml_calls import Call, optional
from ludwig_nb.gpu.nvml_fields import read_fields

__all__ = ["COUNTER_CAUSES", "CounterReader"]

log = logging.getLogger(__name__)

#: GpuSample field -> (field-id names in preference order, violation policy name, its reason)
COUNTER_CAUSES: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    "throttled_power_s": (
        ("NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP", "NVML_FI_DEV_PERF_POLICY_POWER"),
        "NVML_PERF_POLICY_POWER",
        "sw_power_cap",
    ),
    "throttled_thermal_s": (
        ("NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN", "NVML_FI_DEV_PERF_POLICY_THERMAL"),
        "NVML_PERF_POLICY_THERMAL",
        "sw_thermal_slowdown",
    ),
    "throttled_hw_thermal_s": (
        ("NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN",),
        None,
        "hw_thermal_slowdown",
    ),
    "throttled_power_brake_s": (
        ("NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN",),
        None,
        "hw_power_brake_slowdown",
    ),
    "throttled_sync_boost_s": (
        ("NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST", "NVML_FI_DEV_PERF_POLICY_SYNC_BOOST"),
        "NVML_PERF_POLICY_SYNC_BOOST",
        "sync_boost",
    ),
}
_NS = 1e9
#: a counter may run this much ahead of the wall clock (s per s, plus a fixed slack in s)
_RATE_SLACK, _ABS_SLACK = 0.1, 0.05
#: seconds its reason may stay set while a counter stands still before it is distrusted
_STALL_LIMIT = 10.0


@dataclasses.dataclass
class _Source:
    """Where one cause's counter comes from now, and how it behaved."""

    candidates: list[tuple[str, int | None]]  # ("field", id) ... then ("violation", None)
    on_drop: Callable[[], None]
    last: tuple[float, float] | None = None  # (wall time, counter seconds)
    stalled_s: float = 0.0
    flagged: bool = False

    @property
    def current(self) -> tuple[str, int | None] | None:
        return self.candidates[0] if self.candidates else None

    def drop(self, why: str) -> None:
        if self.candidates:
            log.debug("throttle counter %s dropped: %s", self.candidates[0], why)
            self.candidates.pop(0)
        self.last, self.stalled_s = None, 0.0
        self.on_drop()


class CounterReader:
    """One GPU's throttle counters, read every tick and kept honest.

    Args:
        nvml: The ``pynvml`` module.
        handle: The GPU's NVML handle.
        call: Calls one metric of this device, degrading on its own.
    """

    def __init__(self, nvml: ModuleType, handle: Any, call: Call) -> None:
        self._nvml, self._handle, self._call = nvml, handle, call
        self._wanted: list[int] | None = None  # the field ids to read: the sources' current
        self._sources = {
            key: _Source(self._candidates(*spec), self._forget_wanted)
            for key, spec in COUNTER_CAUSES.items()
        }

    def _forget_wanted(self) -> None:
        self._wanted = None

    def _wanted_fields(self) -> list[int]:
        if self._wanted is None:
            self._wanted = sorted(
                {
                    s.current[1]
                    for s in self._sources.values()
                    if s.current is not None
                    and s.current[0] == "field"
                    and s.current[1] is not None
                }
            )
        return self._wanted

    def _candidates(
        self, names: Sequence[str], policy: str | None, _reason: str
    ) -> list[tuple[str, int | None]]:
        out: list[tuple[str, int | None]] = []
        for name in names:
            field = getattr(self._nvml, name, None)
            if isinstance(field, int) and ("field", field) not in out:
                out.append(("field", field))
        if policy is not None and isinstance(getattr(self._nvml, policy, None), int):
            out.append(("violation", getattr(self._nvml, policy)))
        return out

    def sources(self) -> dict[str, str]:
        """Where each counter is read from now (``"field 74"``, ``"violation status"``)."""
        out = {}
        for key, source in self._sources.items():
            current = source.current
            out[key] = (
                "absent"
                if current is None
                else f"field {current[1]}"
                if current[0] == "field"
                else "nvmlDeviceGetViolationStatus"
            )
        return out

    def read(self, now: float, reasons: Sequence[str]) -> dict[str, float | None]:
        """Every counter in seconds at wall time ``now`` (s); ``reasons``: this tick's flags."""
        fields = self._read_fields()
        out: dict[str, float | None] = {}
        for key, source in self._sources.items():
            flagged = COUNTER_CAUSES[key][2] in reasons
            out[key] = self._one(key, source, fields, now, flagged)
        return out

    def _read_fields(self) -> dict[int, float | None]:
        """This tick's field values; a refused field's next candidate is read at once."""
        values: dict[int, float | None] = {}
        for _ in range(3):  # a cause has at most two field ids, then the violation status
            wanted = [f for f in self._wanted_fields() if f not in values]
            if not wanted:
                break
            read = self._call("counter_fields", read_fields, self._nvml, self._handle, wanted)
            if read is None:
                if self._call.gone("counter_fields"):  # the call itself: every field goes
                    for source in self._sources.values():
                        while source.current is not None and source.current[0] == "field":
                            source.drop("nvmlDeviceGetFieldValues unsupported")
                break
            values.update(read.values)
            if not read.refused:
                break
            for source in self._sources.values():
                while (
                    source.current is not None
                    and source.current[0] == "field"
                    and source.current[1] in read.refused
                ):
                    source.drop("not supported")
        return values

    def _one(
        self, key: str, source: _Source, fields: dict[int, float | None], now: float, flagged: bool
    ) -> float | None:
        current = source.current
        if current is None:
            return None
        kind, ident = current
        raw = fields.get(ident) if kind == "field" and ident is not None else None
        if kind == "violation":
            raw = self._violation(key, ident)
        if raw is None:
            return None
        seconds = raw / _NS
        return seconds if self._plausible(source, now, seconds, flagged) else None

    def _violation(self, key: str, policy: int | None) -> float | None:
        nvml, h = self._nvml, self._handle
        metric = f"violation_{key}"
        status = self._call(
            metric, lambda: optional(nvml, "nvmlDeviceGetViolationStatus")(h, policy)
        )
        if status is None:
            if self._call.gone(metric):
                self._sources[key].drop("violation status unavailable")
            return None
        return float(status.violationTime)

    @staticmethod
    def _plausible(source: _Source, now: float, seconds: float, flagged: bool) -> bool:
        last, source.last = source.last, (now, seconds)
        was_flagged, source.flagged = source.flagged, flagged
        if last is None or now <= last[0]:
            return True
        dt, grown = now - last[0], seconds - last[1]
        if grown < 0:
            return True  # the driver reloaded: a new baseline
        if grown > dt * (1 + _RATE_SLACK) + _ABS_SLACK:
            source.drop(f"grew {grown:.3g} s in {dt:.3g} s")
            return False
        if grown > 0 or not (was_flagged and flagged):
            source.stalled_s = 0.0
            return True
        source.stalled_s += dt
        if source.stalled_s >= _STALL_LIMIT:
            source.drop(f"stood still {source.stalled_s:.3g} s while its reason was set")
            return False
        return True
