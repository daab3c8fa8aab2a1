"""GPM (GPU Performance Monitoring) metrics through NVML.

SM activity, occupancy, tensor activity and DRAM bandwidth, as DCGM reports them, without a DCGM
host engine.

GPM exists on Hopper and newer. A metric is the rate between two GPM samples, so the first
read of a device only takes a sample; from the second read on every metric covers the time
since the previous read (one sampler tick). A device without GPM (``isSupportedDevice``
0, or an NVML or nvidia-ml-py that lacks the calls) is asked once and never again: its
metrics are absent, never an error.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

__all__ = ["GPM_FIELDS", "GpmReader"]

log = logging.getLogger(__name__)

#: our GpuSample field -> the name of its NVML GPM metric id in pynvml (read when sampling:
#: pynvml is imported lazily)
GPM_FIELDS: dict[str, str] = {
    "sm_activity": "NVML_GPM_METRIC_SM_UTIL",  # % of SMs busy
    "sm_occupancy": "NVML_GPM_METRIC_SM_OCCUPANCY",  # % of the theoretical warps active
    "tensor_activity": "NVML_GPM_METRIC_ANY_TENSOR_UTIL",  # % of the time a tensor core works
    "memory_bandwidth": "NVML_GPM_METRIC_DRAM_BW_UTIL",  # % of the peak DRAM bandwidth
}


class GpmReader:
    """GPM metrics of one physical GPU; :meth:`read` returns ``{field: %}`` or ``{}``.

    Args:
        nvml: The ``pynvml`` module.
        handle: The GPU's NVML device handle.
    """

    def __init__(self, nvml: ModuleType, handle: Any) -> None:
        self._nvml = nvml
        self._handle = handle
        self._supported: bool | None = None
        self._previous: Any = None
        self._current: Any = None
        self._request: Any = None  # one request struct, reused (it holds 477 metric slots)

    @property
    def supported(self) -> bool | None:
        """None until the first read; then whether the device offers GPM."""
        return self._supported

    def read(self) -> dict[str, float]:
        """The metrics since the previous read (``{}`` on the first read or without GPM).

        Never raises.
        """
        if self._supported is False:
            return {}
        nvml = self._nvml
        try:
            if self._supported is None and not self._probe():
                return {}
            nvml.nvmlGpmSampleGet(self._handle, self._current)
            if self._previous is None:
                self._previous = nvml.nvmlGpmSampleAlloc()
                self._previous, self._current = self._current, self._previous
                return {}
            values = self._metrics()
            self._previous, self._current = self._current, self._previous
            return values
        except (nvml.NVMLError, AttributeError) as exc:
            log.debug("GPM read failed (%s); GPM metrics are off for this device", exc)
            self.close()
            self._supported = False
            return {}

    def _probe(self) -> bool:
        support = self._nvml.nvmlGpmQueryDeviceSupport(self._handle)
        self._supported = bool(support.isSupportedDevice)
        if self._supported:
            self._current = self._nvml.nvmlGpmSampleAlloc()
        return self._supported

    def _metrics(self) -> dict[str, float]:
        nvml = self._nvml
        request = self._request
        if request is None:
            request = self._request = nvml.c_nvmlGpmMetricsGet_t()
            request.version = nvml.NVML_GPM_METRICS_GET_VERSION
            request.numMetrics = len(GPM_FIELDS)
            for slot, metric_id in enumerate(GPM_FIELDS.values()):
                request.metrics[slot].metricId = getattr(nvml, metric_id)
        request.sample1 = self._previous
        request.sample2 = self._current
        nvml.nvmlGpmMetricsGet(request)
        values: dict[str, float] = {}
        for slot, name in enumerate(GPM_FIELDS):
            metric = request.metrics[slot]
            if metric.nvmlReturn == nvml.NVML_SUCCESS:  # each metric has its own return code
                values[name] = float(metric.value)
        return values

    def close(self) -> None:
        """Free the GPM sample buffers (idempotent)."""
        for sample in (self._previous, self._current):
            if sample is not None:
                try:
                    self._nvml.nvmlGpmSampleFree(sample)
                except Exception as exc:  # a dying driver at shutdown
                    log.debug("nvmlGpmSampleFree failed: %s", exc)
        self._previous = self._current = None
