"""Optimizers, regularisation, gradient clipping and the ``learning_rate: auto`` heuristic.

The optimizers take Ludwig's names and parameters.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch import nn

__all__ = ["OPTIMIZERS", "auto_learning_rate", "build_optimizer", "clip_gradients", "penalty"]

OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "adagrad": torch.optim.Adagrad,
    "adadelta": torch.optim.Adadelta,
    "adamax": torch.optim.Adamax,
    "nadam": torch.optim.NAdam,
    "rmsprop": torch.optim.RMSprop,
}
_UNSTRUCTURED = frozenset({"text", "sequence", "image", "audio", "timeseries"})


def auto_learning_rate(config: Mapping[str, Any]) -> float:
    """Ludwig's heuristic.

    0.001 for tabular inputs, 1e-4 when an input is unstructured (text, sequence, ...) with a
    non-pretrained encoder (the only kind built in).
    """
    kinds = {f.get("type") for f in config.get("input_features") or []}
    return 1e-4 if kinds & _UNSTRUCTURED else 1e-3


def build_optimizer(
    params: Iterable[nn.Parameter], spec: Mapping[str, Any], learning_rate: float
) -> torch.optim.Optimizer:
    """The torch optimizer for ``trainer.optimizer``.

    Keys the class does not take (such as ``type``) are dropped. Raises ``ValueError`` for an
    unknown type.
    """
    name = spec.get("type") or "adam"
    if name not in OPTIMIZERS:
        raise ValueError(f"optimizer {name!r} is not available in the built-in engine")
    cls: Any = OPTIMIZERS[name]
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self", "params", "lr"}
    kwargs = {k: v for k, v in spec.items() if k in accepted and v is not None}
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    optimizer: torch.optim.Optimizer = cls(
        [p for p in params if p.requires_grad], lr=learning_rate, **kwargs
    )
    return optimizer


def penalty(module: nn.Module, kind: str | None, strength: float) -> torch.Tensor | None:
    """``regularization_type`` l1 / l2 / l1_l2 times ``regularization_lambda``; None when 0."""
    if not strength or kind is None:
        return None
    weights = [p for p in module.parameters() if p.requires_grad]
    total = torch.zeros((), device=weights[0].device)
    if kind in ("l1", "l1_l2"):
        total = total + sum(p.abs().sum() for p in weights)
    if kind in ("l2", "l1_l2"):
        total = total + sum(p.pow(2).sum() for p in weights)
    return strength * total


def clip_gradients(params: list[nn.Parameter], spec: Mapping[str, Any] | None) -> None:
    """``gradient_clipping`` over ``params``.

    ``clipglobalnorm`` (all parameters), ``clipnorm`` (each parameter), ``clipvalue`` (each
    element).
    """
    if not spec:
        return
    if spec.get("clipglobalnorm"):
        torch.nn.utils.clip_grad_norm_(params, float(spec["clipglobalnorm"]))
    if spec.get("clipnorm"):
        for p in params:
            torch.nn.utils.clip_grad_norm_([p], float(spec["clipnorm"]))
    if spec.get("clipvalue"):
        torch.nn.utils.clip_grad_value_(params, float(spec["clipvalue"]))
