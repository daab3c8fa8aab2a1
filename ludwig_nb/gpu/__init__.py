"""GPU and host telemetry: NVML, psutil, a simulated GPU, and the sampler thread.

Importing this package touches no driver and starts no thread: NVML is initialised on the
first ``NvmlSource.sample()`` and the sampler thread by ``Sampler.start()`` /
``kernel_sampler()``.
"""

from __future__ import annotations

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot
from ludwig_nb.gpu.host import HostSource
from ludwig_nb.gpu.kernel import kernel_sampler, stop_kernel_sampler
from ludwig_nb.gpu.nvml import NvmlSource
from ludwig_nb.gpu.sampler import MIN_INTERVAL, Sampler
from ludwig_nb.gpu.simulated import SimulatedGpu, ThermalProfile
from ludwig_nb.gpu.source import GpuSource

__all__ = [
    "MIN_INTERVAL",
    "GpuSample",
    "GpuSource",
    "HostSample",
    "HostSource",
    "NvmlSource",
    "Sampler",
    "SimulatedGpu",
    "Snapshot",
    "ThermalProfile",
    "kernel_sampler",
    "stop_kernel_sampler",
]
