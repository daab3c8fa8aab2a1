"""``NvmlSource``: GPU readings through NVIDIA's NVML binding (``nvidia-ml-py``).

Nothing happens at import or construction: NVML is initialised on the first ``available``
or ``sample()``, under a lock, and shut down by ``close()``. Each metric degrades on its
own (House style 1):

* NotSupported / FunctionNotFound / NoPermission / ArgumentVersionMismatch: that metric
  (that call variant) is recorded as unsupported for that device and never asked again;
  the next variant, if any, is tried (memory v2 -> v1, temperature ``V`` -> legacy call,
  clock event reasons -> deprecated throttle reasons).
* GpuIsLost / ResetRequired: the device is marked ``lost`` and not called again; the
  others go on.
* anything else (Timeout, Unknown, ...): that metric is ``None`` for this sample only.

Name, UUID, the power limit and the thermal thresholds are read once; the thermal margin
(``gpu/nvml_thermal.py``) and the throttle counters (``gpu/nvml_counters.py``) every tick,
each from the best source the driver answers, so each degrades on its own too.
:meth:`NvmlSource.support` says which source each device uses.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ludwig_nb.core.gpu_sample import GpuSample, decode_clock_reasons
from ludwig_nb.gpu.gpm import GpmReader
from ludwig_nb.gpu.nvml_calls import MissingFunction, init_failure, optional, unsupported_codes
from ludwig_nb.gpu.nvml_counters import CounterReader
from ludwig_nb.gpu.nvml_device import Device, DeviceCalls, device_support
from ludwig_nb.gpu.nvml_thermal import ThermalReader

__all__ = ["NvmlSource"]

log = logging.getLogger(__name__)

#: nvmlInitWithFlags: none of NVML_INIT_FLAG_NO_GPUS / NVML_INIT_FLAG_NO_ATTACH (pynvml names
#: no empty set): attach to every GPU, as nvmlInit does
_ATTACH_ALL_GPUS = 0


class _DeviceLost(Exception):
    pass


class NvmlSource:
    """Reads every NVIDIA GPU (and MIG instance) of this machine. Thread-safe.

    ``nvml``: the ``pynvml`` module to use (default: import it lazily); ``clock``:
    wall-clock seconds for the sample times; ``pid``: whose GPU memory is
    ``process_memory`` (default: this process).
    """

    def __init__(
        self,
        nvml: ModuleType | None = None,
        clock: Callable[[], float] = time.time,
        pid: int | None = None,
    ) -> None:
        self._nvml = nvml
        self._clock = clock
        self._pid = os.getpid() if pid is None else pid
        self._lock = threading.RLock()
        self._started = False
        self._initialised = False
        self._reason = ""
        self._devices: list[Device] = []

    # -- lifecycle -------------------------------------------------------------------
    @property
    def available(self) -> bool:
        """True when NVML initialised and found at least one GPU (initialises it)."""
        self._ensure()
        return self._initialised and bool(self._devices)

    @property
    def reason(self) -> str:
        """Why there is nothing to read, in one line ("" when available)."""
        self._ensure()
        return self._reason

    @property
    def device_count(self) -> int:
        """Physical GPUs plus MIG instances found."""
        self._ensure()
        return len(self._devices)

    def close(self) -> None:
        """Shut NVML down (idempotent); a later ``sample()`` initialises it again."""
        with self._lock:
            if self._initialised and self._nvml is not None:
                for device in self._devices:
                    if device.gpm is not None:
                        device.gpm.close()
                try:
                    self._nvml.nvmlShutdown()
                except Exception as exc:  # a dying driver at exit is not worth a traceback
                    log.debug("nvmlShutdown failed: %s", exc)
            self._started = self._initialised = False
            self._devices = []

    def _ensure(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            try:
                self._init()
            except Exception as exc:
                self._reason = init_failure(self._nvml, exc)
                self._initialised = False
                self._devices = []

    def _init(self) -> None:
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                self._reason = "no NVIDIA driver found: nvidia-ml-py is not installed"
                return
            self._nvml = pynvml
        # The one place NVML is initialised (pyproject bans pynvml.nvmlInit elsewhere).
        self._nvml.nvmlInitWithFlags(_ATTACH_ALL_GPUS)
        self._initialised = True
        count = self._nvml.nvmlDeviceGetCount()
        for index in range(count):
            device = Device(index, self._nvml.nvmlDeviceGetHandleByIndex(index))
            self._devices.append(device)
            self._devices.extend(self._mig_devices(device))
        self._reason = "" if self._devices else "no NVIDIA GPU found: the driver reports 0 devices"

    def _mig_devices(self, parent: Device) -> list[Device]:
        nvml = self._nvml
        assert nvml is not None
        try:
            current, _ = nvml.nvmlDeviceGetMigMode(parent.handle)
            if current != nvml.NVML_DEVICE_MIG_ENABLE:
                return []
            slots = nvml.nvmlDeviceGetMaxMigDeviceCount(parent.handle)
        except nvml.NVMLError:
            return []  # no MIG on this board or driver
        found: list[Device] = []
        for slot in range(slots):
            try:
                handle = nvml.nvmlDeviceGetMigDeviceHandleByIndex(parent.handle, slot)
            except nvml.NVMLError:
                continue  # an empty slot answers NOT_FOUND
            found.append(Device(parent.index, handle, mig_index=len(found)))
        return found

    def support(self) -> list[dict[str, Any]]:
        """What each device offers, after at least one sample: metric -> its source.

        ``"absent"`` where the device or driver offers nothing; ``"unsupported"`` lists the
        calls it refused.
        """
        with self._lock:
            return [device_support(d) for d in self._devices]

    # -- sampling --------------------------------------------------------------------
    def sample(self) -> list[GpuSample]:
        """One :class:`GpuSample` per device in index order; ``[]`` when unavailable.

        Never raises: a failing metric is None, a lost device is ``lost=True``.
        """
        self._ensure()
        with self._lock:
            if not self._initialised:
                return []
            now = self._clock()
            return [self._sample_device(d, now) for d in self._devices]

    def _sample_device(self, dev: Device, now: float) -> GpuSample:
        if not dev.lost:
            try:
                fields = self._read_device(dev, now)
                return GpuSample(index=dev.index, time=now, mig_index=dev.mig_index, **fields)
            except _DeviceLost:
                dev.lost = True
                log.warning(
                    "ludwig_nb: GPU %s is lost; the other GPUs are still sampled", dev.index
                )
            except Exception as exc:  # a broken binding must not stop the sampler
                log.debug("sampling GPU %s failed: %s", dev.index, exc)
                return GpuSample(index=dev.index, time=now, mig_index=dev.mig_index)
        return GpuSample(
            index=dev.index,
            name=dev.static.get("name"),
            uuid=dev.static.get("uuid"),
            lost=True,
            time=now,
            mig_index=dev.mig_index,
        )

    def _read_device(self, dev: Device, now: float) -> dict[str, Any]:
        if not dev.static:
            dev.static = self._read_static(dev)
        nvml = self._nvml
        assert nvml is not None
        activity = self._read_activity(nvml, dev)  # the first call: a lost GPU says so here
        memory = self._read_memory(nvml, dev)
        thermal = self._read_thermal(nvml, dev)
        return {
            **dev.static,
            **activity,
            **memory,
            **thermal,
            **self._read_counters(nvml, dev, now, thermal["clock_reasons"]),
            **self._read_gpm(nvml, dev),
            "process_memory": self._process_memory(dev),
        }

    def _read_counters(
        self, nvml: ModuleType, dev: Device, now: float, reasons: tuple[str, ...]
    ) -> dict[str, Any]:
        """Read the energy (J) and throttle-time (s per cause) counters, since the driver loaded.

        The profile takes their differences. A MIG instance has none of its own.
        """
        if dev.mig_index is not None:
            return {}
        h = dev.handle
        energy = self._call(
            dev, "energy", lambda: optional(nvml, "nvmlDeviceGetTotalEnergyConsumption")(h)
        )
        if dev.counters is None:
            dev.counters = CounterReader(nvml, h, DeviceCalls(self._call, dev))
        return {
            "energy_consumed": None if energy is None else energy / 1e3,  # mJ -> J
            **dev.counters.read(now, reasons),
        }

    def _read_gpm(self, nvml: ModuleType, dev: Device) -> dict[str, float]:
        """SM activity, occupancy, tensor activity, DRAM bandwidth (%, GPM) or nothing."""
        if dev.mig_index is not None:
            return {}  # MIG instances need nvmlGpmMigSampleGet; the parent's rates cover it
        if dev.gpm is None:
            dev.gpm = GpmReader(nvml, dev.handle)
        return dev.gpm.read()

    def _read_activity(self, nvml: ModuleType, dev: Device) -> dict[str, Any]:
        """Utilisation %, power W, fan %, clocks MHz and the P-state."""
        h = dev.handle
        fields: dict[str, Any] = {}
        util = self._call(dev, "utilization", nvml.nvmlDeviceGetUtilizationRates, h)
        if util is not None:
            fields["utilization_gpu"] = float(util.gpu)
            fields["utilization_memory"] = float(util.memory)
        power = self._call(dev, "power", nvml.nvmlDeviceGetPowerUsage, h)
        fields["power_draw"] = None if power is None else power / 1000.0  # mW -> W
        fields["fan"] = _num(self._call(dev, "fan", nvml.nvmlDeviceGetFanSpeed, h))
        get_clock = nvml.nvmlDeviceGetClockInfo
        fields["clock_sm"] = _num(self._call(dev, "clock_sm", get_clock, h, nvml.NVML_CLOCK_SM))
        fields["clock_memory"] = _num(
            self._call(dev, "clock_memory", get_clock, h, nvml.NVML_CLOCK_MEM)
        )
        pstate = self._call(dev, "pstate", nvml.nvmlDeviceGetPerformanceState, h)
        known = pstate is not None and nvml.NVML_PSTATE_0 <= pstate <= nvml.NVML_PSTATE_15
        fields["pstate"] = int(pstate) if known else None  # not NVML_PSTATE_UNKNOWN
        return fields

    def _read_memory(self, nvml: ModuleType, dev: Device) -> dict[str, Any]:
        """Used and total bytes: the v2 call (without driver-reserved memory), else v1."""
        h = dev.handle
        memory = self._first(
            dev,
            ("memory_v2", lambda: nvml.nvmlDeviceGetMemoryInfo(h, version=nvml.nvmlMemory_v2)),
            ("memory_v1", lambda: nvml.nvmlDeviceGetMemoryInfo(h)),
        )
        if memory is None:
            return {}
        return {"memory_used": int(memory.used), "memory_total": int(memory.total)}

    def _read_thermal(self, nvml: ModuleType, dev: Device) -> dict[str, Any]:
        """Read the temperature, the margin and thresholds (°C) and the clock event reasons.

        °C from the V call, else the legacy one; the margin and thresholds from
        ``ThermalReader``; the decoded clock event reasons from the current call, else the
        deprecated throttle reasons.
        """
        h = dev.handle
        temperature = _num(
            self._first(
                dev,
                ("temperature_v", lambda: _temperature_v(nvml, h)),
                (
                    "temperature",
                    lambda: nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU),
                ),
            )
        )
        reasons = self._first(
            dev,
            ("clock_events", lambda: optional(nvml, "nvmlDeviceGetCurrentClocksEventReasons")(h)),
            ("clock_throttle", lambda: nvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
        )
        headroom: dict[str, Any] = {}
        if dev.mig_index is None:  # a MIG instance has no sensor of its own
            if dev.thermal is None:
                dev.thermal = ThermalReader(nvml, h, DeviceCalls(self._call, dev))
            headroom = dev.thermal.read(temperature)
        return {
            "temperature": temperature,
            **headroom,
            "clock_reasons": () if reasons is None else decode_clock_reasons(int(reasons)),
        }

    def _read_static(self, dev: Device) -> dict[str, Any]:
        nvml = self._nvml
        assert nvml is not None
        h = dev.handle
        static: dict[str, Any] = {
            "name": _text(self._call(dev, "name", nvml.nvmlDeviceGetName, h)),
            "uuid": _text(self._call(dev, "uuid", nvml.nvmlDeviceGetUUID, h)),
        }
        limit = self._call(dev, "power_limit", nvml.nvmlDeviceGetEnforcedPowerLimit, h)
        static["power_limit"] = None if limit is None else limit / 1000.0
        return static

    def _process_memory(self, dev: Device) -> int | None:
        nvml = self._nvml
        assert nvml is not None
        procs = self._call(dev, "processes", nvml.nvmlDeviceGetComputeRunningProcesses, dev.handle)
        if procs is None:
            return None
        used = [p.usedGpuMemory for p in procs if p.pid == self._pid]
        return sum(int(u) for u in used if u is not None)

    # -- one metric, degrading on its own --------------------------------------------
    def _first(self, dev: Device, *variants: tuple[str, Callable[[], Any]]) -> Any:
        """The first supported variant's value (later variants are fallbacks)."""
        for metric, read in variants:
            if metric in dev.unsupported:
                continue
            value = self._call(dev, metric, read)
            if value is not None or metric not in dev.unsupported:
                return value
        return None

    def _call(self, dev: Device, metric: str, fn: Callable[..., Any], *args: Any) -> Any:
        if metric in dev.unsupported:
            return None
        nvml = self._nvml
        assert nvml is not None
        try:
            return fn(*args)
        except nvml.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code in (nvml.NVML_ERROR_GPU_IS_LOST, nvml.NVML_ERROR_RESET_REQUIRED):
                raise _DeviceLost from exc
            if code in unsupported_codes(nvml):
                dev.unsupported.add(metric)
                log.debug("GPU %s: %s unsupported (%s); not asked again", dev.index, metric, exc)
            return None
        except MissingFunction:
            dev.unsupported.add(metric)
            return None


def _temperature_v(nvml: ModuleType, handle: Any) -> Any:
    return optional(nvml, "nvmlDeviceGetTemperatureV")(handle, nvml.NVML_TEMPERATURE_GPU)


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
