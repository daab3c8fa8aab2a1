"""Warm-up of the built-in engine.

The imports and lazy initialisations of a first ``fit``, done ahead in a background thread so that
the first step comes soon after ``train()``.

Without it the first fit in a process pays for importing torch (about 2 s on a small
CPU machine) on top of the engine's own modules. (The first torch.optim optimizer used to
import ``torch._dynamo`` too, 1.5-2.5 s more; optim.py's eager optimizers never do.)
Importing this module costs nothing; :func:`start` runs :func:`warm_up` once.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["start", "warm_up"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_started: list[threading.Thread] = []  # the warm-up thread, once started


def warm_up() -> None:
    """Import torch and the engine, and build and step one optimizer.

    The first step loads torch's lazily initialised pieces. Idempotent; raises nothing (a
    failure is logged: the first ``fit`` then does the same work and reports any real error
    itself).
    """
    try:
        import torch

        import ludwig_nb.engines.builtin.trainer  # noqa: F401  (setup, model, model_io)
        from ludwig_nb.engines.builtin.optim import build_optimizer

        weight = torch.nn.Parameter(torch.zeros(1))
        optimizer = build_optimizer([weight], {}, 1e-3)
        (weight * 2.0).sum().backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        optimizer.zero_grad()
    except Exception:  # a warm-up must never break the kernel
        log.debug("engine warm-up failed", exc_info=True)


def start() -> threading.Thread:
    """Run :func:`warm_up` in a daemon thread, once per process.

    Returns that thread (``join()`` it to wait until the warm-up is done).
    """
    with _lock:
        if not _started:
            thread = threading.Thread(target=warm_up, name="ludwig-nb-warm-up", daemon=True)
            thread.start()
            _started.append(thread)
        return _started[0]
