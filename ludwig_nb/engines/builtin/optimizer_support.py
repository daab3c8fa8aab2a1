"""Which of Ludwig's optimizers the built-in engine runs, checked before a run.

Ludwig 0.11 names 26 optimizers: ``lbfgs``, torch.optim's eight (:data:`TORCH_OPTIMIZERS`)
and, when bitsandbytes is installed, bitsandbytes' seventeen (:data:`BITSANDBYTES_OPTIMIZERS`:
8-bit and paged Adam / AdamW / Lion, LAMB, LARS and the rest). The built-in engine runs
torch's always and bitsandbytes' when bitsandbytes >= 0.50 is installed (the first release that
imports and steps them without a GPU; a paged optimizer pages its states to the host only on
CUDA). Where bitsandbytes is missing, too old, or its class refuses a setting (SGD and LARS
without momentum, 8-bit AMSGrad, centred RMSprop, Adagrad's learning-rate decay), the problem
is reported at its key before the run starts, with what to do. ``lbfgs`` needs a closure that
re-evaluates the loss within each step, which the built-in loop does not give: it is refused,
pointing at ``engine: ludwig``.

Cheap: no torch, no bitsandbytes import (only its installed version).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

__all__ = [
    "BITSANDBYTES_MINIMUM",
    "BITSANDBYTES_OPTIMIZERS",
    "TORCH_OPTIMIZERS",
    "bitsandbytes_problem",
    "check_optimizer",
]

#: (path, message, *, also=..., engine_hint=...) -> None; see capabilities._Reporter
Report = Callable[..., None]

TORCH_OPTIMIZERS = ("sgd", "adam", "adamw", "adagrad", "adadelta", "adamax", "nadam", "rmsprop")
BITSANDBYTES_OPTIMIZERS = (
    "sgd_8bit",
    "adam_8bit",
    "paged_adam",
    "paged_adam_8bit",
    "adamw_8bit",
    "paged_adamw",
    "paged_adamw_8bit",
    "adagrad_8bit",
    "rmsprop_8bit",
    "lamb",
    "lamb_8bit",
    "lars",
    "lars_8bit",
    "lion",
    "lion_8bit",
    "paged_lion",
    "paged_lion_8bit",
)
BITSANDBYTES_MINIMUM = (0, 50)
_INSTALL = 'pip install "bitsandbytes>=0.50"'
_OTHER_ENGINE = "or engine: ludwig (which needs bitsandbytes too)"

# bitsandbytes' classes refuse these settings when they are built:
# (optimizers, key, "is it refused?", what to write instead)
_REFUSED: tuple[tuple[tuple[str, ...], str, Callable[[Any], bool], str], ...] = (
    (("sgd_8bit", "lars", "lars_8bit"), "momentum", lambda v: not v, "set momentum above 0"),
    (
        ("adam_8bit", "paged_adam_8bit", "adamw_8bit", "paged_adamw_8bit"),
        "amsgrad",
        bool,
        "set amsgrad: false",
    ),
    (("rmsprop_8bit",), "centered", bool, "set centered: false"),
    (("rmsprop_8bit",), "alpha", lambda v: v == 0, "set alpha above 0"),
    (("adagrad_8bit",), "lr_decay", bool, "set lr_decay: 0"),
    (("adagrad_8bit",), "initial_accumulator_value", bool, "set initial_accumulator_value: 0"),
)


def bitsandbytes_problem(version: str | None = None) -> str | None:
    """Say why bitsandbytes' optimizers cannot run here; None when they can.

    Args:
        version: bitsandbytes' version; None reads the installed one.

    Returns:
        The reason (missing, or older than 0.50), or None.
    """
    if version is None:
        try:
            version = importlib.metadata.version("bitsandbytes")
        except importlib.metadata.PackageNotFoundError:
            return "bitsandbytes is not installed"
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:2]]
    if tuple(parts) < BITSANDBYTES_MINIMUM:
        return f"bitsandbytes {version} is older than 0.50 (it needs a GPU to import)"
    return None


def check_optimizer(
    optimizer: dict[str, Any], report: Report, installed: str | None = None
) -> None:
    """Report what the built-in engine cannot run of ``trainer.optimizer``.

    Args:
        optimizer: The rendered ``trainer.optimizer`` section.
        report: Where problems go, located at a key under ``trainer.optimizer``.
        installed: bitsandbytes' version, for tests; None reads the installed one.
    """
    name = optimizer.get("type")
    path = ("trainer", "optimizer", "type")
    if name in TORCH_OPTIMIZERS:
        return
    if name not in BITSANDBYTES_OPTIMIZERS:
        report(
            path,
            f"the {name} optimizer is not run by the built-in engine",
            also=TORCH_OPTIMIZERS + BITSANDBYTES_OPTIMIZERS,
        )
        return
    why = bitsandbytes_problem(installed)
    if why is not None:
        report(
            path,
            f"the {name} optimizer is bitsandbytes', and {why}",
            engine_hint=f"{_INSTALL}, {_OTHER_ENGINE}",
            also=TORCH_OPTIMIZERS,
        )
    for names, key, refused, fix in _REFUSED:
        if name in names and refused(optimizer.get(key)):
            report(
                ("trainer", "optimizer", key),
                f"bitsandbytes' {name} optimizer does not take {key}: {optimizer.get(key)!r}",
                engine_hint=f"{fix} (Ludwig's engine refuses it too)",
            )
