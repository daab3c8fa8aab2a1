"""``%load_ext ludwig_nb`` / ``%unload_ext ludwig_nb``: the composition root's entry hooks."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["load", "unload"]


def load(ipython: Any) -> None:
    from ludwig_nb.engines.builtin import warmup
    from ludwig_nb.ipython.magics import LudwigMagics

    warmup.start()  # torch and the engine import in the background while the user types
    ipython.register_magics(LudwigMagics)
    with contextlib.suppress(ImportError):
        from ludwig_nb.ipython.gpu_watch import GpuWatchMagics

        ipython.register_magics(GpuWatchMagics)


def unload(ipython: Any) -> None:
    """Stop the UI pump and the kernel's GPU sampler. Runs go on training (their events
    and checkpoints stay in their run directories) and can be steered again after a
    new ``%load_ext``."""
    import sys

    ui = sys.modules.get("ludwig_nb.ui")
    if ui is not None and hasattr(ui, "shutdown"):
        ui.shutdown()
    gpu = sys.modules.get("ludwig_nb.gpu")
    if gpu is not None and hasattr(gpu, "shutdown_kernel_sampler"):
        gpu.shutdown_kernel_sampler()
