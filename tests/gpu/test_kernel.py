"""The shared per-process sampler and the cheap-import promise."""

from __future__ import annotations

import subprocess
import sys

from ludwig_nb.gpu import kernel_sampler, stop_kernel_sampler


def test_one_shared_sampler_until_stopped() -> None:
    stop_kernel_sampler()  # an earlier test (a dashboard) may have left the shared one running
    try:
        first = kernel_sampler(start=False)
        assert kernel_sampler(start=False) is first
        assert not first.running
        started = kernel_sampler()
        assert started is first and started.running
    finally:
        stop_kernel_sampler()
    assert not first.running
    try:
        assert kernel_sampler(start=False) is not first
    finally:
        stop_kernel_sampler()


def test_importing_the_gpu_package_loads_no_driver_and_starts_no_thread() -> None:
    code = (
        "import sys, threading, ludwig_nb.gpu, ludwig_nb.core.alarms, ludwig_nb.core.series;"
        "print(sorted(m for m in ('pynvml', 'psutil', 'torch') if m in sys.modules),"
        " threading.active_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] 1"
