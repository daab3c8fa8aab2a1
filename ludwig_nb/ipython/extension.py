"""``%load_ext ludwig_nb`` / ``%unload_ext ludwig_nb``: the composition root's entry hooks."""

from __future__ import annotations

from typing import Any

__all__ = ["load", "unload"]


def load(ipython: Any) -> None:
    """Register ludwig_nb's magics on ``ipython`` and warm up imports in a background thread.

    ``%gpu_watch`` is registered only when its widget dependencies import.
    """
    import sys

    from ludwig_nb.ipython.gpu_watch import GpuWatchMagics
    from ludwig_nb.ipython.magics import LudwigMagics
    from ludwig_nb.ipython.warmup import start_kernel_warm_up

    monitoring = sys.modules.get("ludwig_nb.runs.monitoring")
    if monitoring is not None:  # loaded again: the sampler serves the views once more
        monitoring.keep_kernel_sampler()
    ipython.register_magics(LudwigMagics, GpuWatchMagics)
    start_kernel_warm_up()  # (already running in the ludwig_nb kernel: then nothing more)


def unload(ipython: Any) -> None:  # noqa: ARG001 (IPython's hook passes the shell)
    """Stop the UI pump and the kernel's GPU sampler.

    Runs go on training (their events and checkpoints stay in their run directories) and can be
    steered again after a new ``%load_ext``. While a run's temperature alarms listen to the sampler,
    it keeps sampling until the last such run ends (the alarms still pause or stop it).
    """
    import sys

    ui = sys.modules.get("ludwig_nb.ui")
    if ui is not None:
        ui.shutdown()
    monitoring = sys.modules.get("ludwig_nb.runs.monitoring")
    if monitoring is not None:
        watching = monitoring.release_kernel_sampler()
        if watching:
            names = ", ".join(r.name for r in watching)
            print(
                f"ludwig_nb: the GPU sampler keeps watching {len(watching)} run(s) with "
                f"alarms ({names}) until they end"
            )
        return
    gpu = sys.modules.get("ludwig_nb.gpu")
    if gpu is not None:
        gpu.stop_kernel_sampler()
