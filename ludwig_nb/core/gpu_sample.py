"""What one reading of a GPU or of the host looks like: plain frozen data, no driver.

``GpuSample`` and ``HostSample`` cross threads (sampler -> pump, sampler -> alarm watch)
and processes (kernel -> server -> sidebar as JSON), so they are immutable and carry only
numbers, strings and tuples. A field the device or the driver cannot report is ``None``.

Units: bytes for memory, °C for temperatures, W for power, % for utilisation and fan, MHz
for clocks, wall-clock seconds (``time.time()``) for ``time``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CLOCK_REASON_BITS",
    "POWER_REASONS",
    "THERMAL_REASONS",
    "GpuSample",
    "HostSample",
    "Snapshot",
    "decode_clock_reasons",
]

#: NVML clock event (formerly "throttle") reason bits -> our names: pynvml's
#: ``nvmlClocksEventReason<Name>`` (``nvmlClocksThrottleReason<Name>`` for the last two) in
#: snake case. core stays on the standard library, so the bits are written out here;
#: tests/gpu/test_nvml.py checks each against pynvml.
CLOCK_REASON_BITS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),  # nvmlClocksEventReasonGpuIdle
    (0x2, "applications_clocks_setting"),  # nvmlClocksEventReasonApplicationsClocksSetting
    (0x4, "sw_power_cap"),  # nvmlClocksEventReasonSwPowerCap
    (0x8, "hw_slowdown"),  # nvmlClocksEventReasonHwSlowdown
    (0x10, "sync_boost"),  # nvmlClocksEventReasonSyncBoost
    (0x20, "sw_thermal_slowdown"),  # nvmlClocksEventReasonSwThermalSlowdown
    (0x40, "hw_thermal_slowdown"),  # nvmlClocksEventReasonHwThermalSlowdown
    (0x80, "hw_power_brake_slowdown"),  # nvmlClocksEventReasonHwPowerBrakeSlowdown
    (0x100, "display_clock_setting"),  # nvmlClocksEventReasonDisplayClockSetting
    (0x200, "board_limit"),  # nvmlClocksThrottleReasonBoardLimit
    (0x400, "reliability"),  # nvmlClocksThrottleReasonReliability
)

#: Reasons that mean "the card is too hot" / "the card hit its power budget".
THERMAL_REASONS: tuple[str, ...] = ("sw_thermal_slowdown", "hw_thermal_slowdown", "hw_slowdown")
POWER_REASONS: tuple[str, ...] = ("sw_power_cap", "hw_power_brake_slowdown")


def decode_clock_reasons(mask: int) -> tuple[str, ...]:
    """Names of the bits set in an NVML clock event reasons bitmask, in bit order.

    Unknown bits are reported as ``"0x<hex>"`` rather than dropped.
    """
    names = [name for bit, name in CLOCK_REASON_BITS if mask & bit]
    known = 0
    for bit, _ in CLOCK_REASON_BITS:
        known |= bit
    unknown = mask & ~known
    if unknown:
        names.append(f"{unknown:#x}")
    return tuple(names)


@dataclasses.dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU (or one MIG instance: ``mig_index`` is set, ``index`` is its parent).

    ``lost`` is True once the device stopped answering (NVML ``GPU_IS_LOST``).
    """

    index: int
    name: str | None = None
    uuid: str | None = None
    utilization_gpu: float | None = None  # %
    utilization_memory: float | None = None  # % of time the memory was read or written
    memory_used: int | None = None  # bytes
    memory_total: int | None = None  # bytes
    temperature: float | None = None  # °C
    temperature_slowdown: float | None = None  # °C, the device's own threshold
    temperature_shutdown: float | None = None  # °C
    temperature_max: float | None = None  # °C, the maximum operating temperature
    #: °C of headroom before the GPU first slows its clocks for heat (NVML's thermal margin,
    #: "T.Limit"): positive while there is room, 0 or less once it slows down
    temperature_margin: float | None = None
    temperature_memory_max: float | None = None  # °C, where memory heat slows the GPU
    power_draw: float | None = None  # W
    power_limit: float | None = None  # W
    fan: float | None = None  # %
    clock_sm: float | None = None  # MHz
    clock_memory: float | None = None  # MHz
    pstate: int | None = None  # 0 (max performance) .. 15
    clock_reasons: tuple[str, ...] = ()
    process_memory: int | None = None  # bytes used by this process
    lost: bool = False
    time: float = 0.0  # wall-clock seconds
    mig_index: int | None = None  # set for a MIG instance
    # counters and profiling metrics; None where NVML does not offer them
    energy_consumed: float | None = None  # J since the driver loaded (a counter)
    # time the clocks were held down, per cause: counters in seconds since the driver loaded
    throttled_power_s: float | None = None  # by the power cap (SW power capping)
    throttled_thermal_s: float | None = None  # by heat (SW thermal slowdown)
    throttled_hw_thermal_s: float | None = None  # by heat, in hardware (HW thermal slowdown)
    throttled_power_brake_s: float | None = None  # by an external power brake (HW)
    throttled_sync_boost_s: float | None = None  # to match a sync-boost group's slowest GPU
    sm_activity: float | None = None  # % of SMs busy (GPM, Hopper and newer)
    sm_occupancy: float | None = None  # % of the theoretical warps active (GPM)
    tensor_activity: float | None = None  # % of time any tensor core was busy (GPM)
    memory_bandwidth: float | None = None  # % of the peak DRAM bandwidth used (GPM)
    # a GPU read on another machine (a Ray worker's node): ``index`` is then the run-wide
    # number the driver gave it, ``host_index`` its NVML index on ``host``
    host: str | None = None
    node_id: str | None = None
    host_index: int | None = None

    @property
    def memory_percent(self) -> float | None:
        """Memory used as a percentage of the total, or None when either is unknown."""
        if self.memory_used is None or not self.memory_total:
            return None
        return 100.0 * self.memory_used / self.memory_total

    @property
    def label(self) -> str:
        """``"GPU 0"``, ``"GPU 0 MIG 1"``, or ``"GPU 1 on node-b"`` for another host's GPU.

        A GPU on another host is named by its index there (``host_index``).
        """
        base = f"GPU {self.index}"
        if self.host is not None:
            base = (
                f"GPU {self.index if self.host_index is None else self.host_index} on {self.host}"
            )
        return base if self.mig_index is None else f"{base} MIG {self.mig_index}"

    def to_dict(self) -> dict[str, object]:
        """The sample as a JSON-able dict."""
        data = dataclasses.asdict(self)
        data["clock_reasons"] = list(self.clock_reasons)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GpuSample:
        """Rebuild from ``to_dict`` output; unknown keys are ignored (newer writers)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs["clock_reasons"] = tuple(kwargs.get("clock_reasons") or ())
        return cls(**kwargs)


@dataclasses.dataclass(frozen=True)
class HostSample:
    """One reading of the host.

    CPU % (all cores, 0..100) and RAM in bytes, plus this process's CPU % (of all cores, 0..100) and
    resident memory (bytes).
    """

    time: float
    cpu_percent: float | None = None
    memory_used: int | None = None
    memory_total: int | None = None
    process_cpu_percent: float | None = None
    process_rss: int | None = None

    @property
    def memory_percent(self) -> float | None:
        """Host RAM used, in % of the total; None when unknown."""
        if self.memory_used is None or not self.memory_total:
            return None
        return 100.0 * self.memory_used / self.memory_total

    def to_dict(self) -> dict[str, object]:
        """The sample as a JSON-able dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HostSample:
        """Rebuild a sample from :meth:`to_dict`'s form; unknown keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Everything one sampler tick read.

    The GPUs (index order), the host, and, when there is no GPU source, ``reason`` saying why (e.g.
    "no NVIDIA driver found: ...").
    """

    time: float
    gpus: tuple[GpuSample, ...] = ()
    host: HostSample | None = None
    reason: str = ""

    def gpu(self, index: int) -> GpuSample | None:
        """The physical GPU ``index`` (not one of its MIG instances), or None."""
        for sample in self.gpus:
            if sample.index == index and sample.mig_index is None:
                return sample
        return None

    def to_dict(self) -> dict[str, object]:
        """The snapshot as a JSON-able dict."""
        return {
            "time": self.time,
            "gpus": [g.to_dict() for g in self.gpus],
            "host": None if self.host is None else self.host.to_dict(),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Snapshot:
        """Rebuild a snapshot from :meth:`to_dict`'s form.

        Raises:
            KeyError: ``data`` has no ``time``.
        """
        host = data.get("host")
        return cls(
            time=float(data["time"]),
            gpus=tuple(GpuSample.from_dict(g) for g in data.get("gpus", ())),
            host=None if host is None else HostSample.from_dict(host),
            reason=str(data.get("reason", "")),
        )
