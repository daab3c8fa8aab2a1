"""An IPython kernel that starts ludwig_nb's warm-up with itself (``-m ludwig_nb.ipython.kernel``).

In a plain kernel, a notebook's Run All sends its first ``%%ludwig_config`` cell the instant
``%load_ext ludwig_nb`` returns, and that cell's first step waits for torch to import (about
1.1 s of a 1.5 s first step, every import holding the interpreter). This kernel starts the same
warm-up thread ``%load_ext`` starts (the first cell's modules, pandas and bqplot, then torch and
the engine's first optimizer) as soon as ipykernel's modules are loaded, before the kernel
initializes, so the imports overlap the kernel's
own start and the time the notebook takes to open and send its cells. Nothing else changes: the
notebook still says ``%load_ext ludwig_nb`` (it stays portable to any kernel), and that load then
finds the warm-up running and starts nothing more.

``ludwig-nb kernel install`` writes its kernel spec (:mod:`ludwig_nb.kernelspec`).
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Start ``%load_ext``'s warm-up, then ipykernel's kernel app with this process's arguments.

    The warm-up imports ipywidgets before ``initialize()`` has made the shell, and ipywidgets
    registers its comm targets only with a shell it finds at import (without them JupyterLab's
    ``jupyter.widget.control`` request goes unanswered and a widget comm opened from the front
    end finds no target), so once the shell exists they are registered as ``%load_ext
    ipywidgets`` would. (Starting only torch before ``initialize()`` and the rest after it made
    both the kernel's start and the first step later: docs/ARCHITECTURE_CHANGES.md.) A warm-up
    that cannot start (a broken install) leaves a plain kernel, with one line in the kernel's
    log: the kernel must start either way.
    """
    # ipykernel and what its initialize() imports (IPython's core, the shell, comm) first, on
    # this thread: imported beside the warm-up (which imports ipywidgets, hence IPython and
    # comm), initialize() once read `IPython.core` off a package another thread was still
    # importing and the kernel died (AttributeError, in CI)
    import ipykernel.ipkernel  # noqa: F401
    from ipykernel.kernelapp import IPKernelApp

    try:
        from ludwig_nb.ipython.warmup import start_kernel_warm_up

        start_kernel_warm_up()
    except Exception as exc:  # any failure: the kernel starts without it
        _failed("the warm-up", exc)
    app = IPKernelApp.instance()
    app.initialize()  # type: ignore[no-untyped-call]
    try:
        import ipywidgets  # (waits for the warm-up's import of it, if under way)

        ipywidgets.load_ipython_extension(app.shell)
    except Exception as exc:
        _failed("registering the widgets' comm targets", exc)
    app.start()  # type: ignore[no-untyped-call]


def _failed(what: str, exc: Exception) -> None:
    print(
        f"ludwig_nb kernel: {what} failed ({type(exc).__name__}: {exc}); this kernel starts "
        "without it",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
