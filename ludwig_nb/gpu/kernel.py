"""``kernel_sampler()``: the one GPU sampler of this process, shared by every view."""

from __future__ import annotations

import atexit
import threading

from ludwig_nb.gpu.host import HostSource
from ludwig_nb.gpu.nvml import NvmlSource
from ludwig_nb.gpu.sampler import Sampler

__all__ = ["kernel_sampler", "shutdown_kernel_sampler", "stop_kernel_sampler"]


class _Shared:
    """The process-wide slot (a class, not module globals, so the lock guards one object)."""

    lock = threading.Lock()
    sampler: Sampler | None = None
    atexit_registered = False


def kernel_sampler(start: bool = True) -> Sampler:
    """Return the process-wide sampler, creating it on first call.

    The process-wide sampler (NVML + host; host only when NVML has nothing), created on first call
    and started unless ``start`` is False. Stopped at interpreter exit.
    """
    with _Shared.lock:
        if _Shared.sampler is None:
            _Shared.sampler = Sampler(NvmlSource(), HostSource())
            if not _Shared.atexit_registered:
                atexit.register(stop_kernel_sampler)
                _Shared.atexit_registered = True
        sampler = _Shared.sampler
    if start:
        sampler.start()
    return sampler


def stop_kernel_sampler() -> None:
    """Stop the shared sampler and shut NVML down (``%unload_ext``, exit).

    Idempotent; the next :func:`kernel_sampler` call builds a fresh one.
    """
    with _Shared.lock:
        sampler, _Shared.sampler = _Shared.sampler, None
    if sampler is not None:
        sampler.stop()
        if sampler.gpu_source is not None:
            sampler.gpu_source.close()


#: the name ``ludwig_nb.ipython.extension.unload`` calls
shutdown_kernel_sampler = stop_kernel_sampler
