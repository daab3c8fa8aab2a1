"""Losses per output feature (Ludwig names and defaults), on model-space outputs.

binary: ``binary_weighted_cross_entropy`` · category: ``softmax_cross_entropy`` ·
number/vector: ``mean_squared_error``, ``mean_absolute_error``, ``root_mean_squared_error``,
``huber`` · set: ``sigmoid_cross_entropy``. The combined loss is the sum of each loss times
its ``loss.weight`` (default 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch.nn import functional as F

__all__ = ["DEFAULT_LOSS", "LossFn", "build_loss"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

DEFAULT_LOSS = {
    "binary": "binary_weighted_cross_entropy",
    "category": "softmax_cross_entropy",
    "number": "mean_squared_error",
    "vector": "mean_squared_error",
    "set": "sigmoid_cross_entropy",
}


def _weights(values: Any, meta: Mapping[str, Any]) -> torch.Tensor | None:
    if values is None:
        return None
    if isinstance(values, Mapping):
        return torch.tensor([float(values.get(c, 1.0)) for c in meta["idx2str"]])
    return torch.tensor([float(v) for v in values])


def build_loss(feature: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[LossFn, float]:
    """``(loss function, weight)`` for an output feature; ``ValueError`` for unknown types."""
    kind = feature["type"]
    params = dict(feature.get("loss") or {})
    name = params.get("type") or DEFAULT_LOSS[kind]
    weight = float(params.get("weight", 1.0) if params.get("weight") is not None else 1.0)
    if name == "binary_weighted_cross_entropy":
        pos = params.get("positive_class_weight")
        penalised = bool(params.get("confidence_penalty"))
        pos_t = None if pos is None else torch.tensor(float(pos))

        def bce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            pw = None if pos_t is None else pos_t.to(pred.device)
            logits = pred.float()
            loss = F.binary_cross_entropy_with_logits(logits, target, pos_weight=pw)
            if not penalised:
                return _robust(loss, logits, params, classes=2)
            two = torch.stack([-logits, logits], dim=-1)  # as 2-class logits, for the entropy
            return _robust(loss, two, params, classes=2)

        return bce, weight
    if name == "softmax_cross_entropy":
        cw = _weights(params.get("class_weights"), meta)
        smoothing = float(params.get("label_smoothing") or 0.0)

        def ce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            w = None if cw is None else cw.to(pred.device)
            loss = F.cross_entropy(
                pred.float(), target, weight=w, ignore_index=-1, label_smoothing=smoothing
            )
            return _robust(loss, pred.float(), params, classes=pred.shape[-1])

        return ce, weight
    if name == "sigmoid_cross_entropy":
        cw = _weights(params.get("class_weights"), meta)

        def sce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            w = None if cw is None else cw.to(pred.device)
            return F.binary_cross_entropy_with_logits(pred.float(), target, pos_weight=w)

        return sce, weight
    return _regression(name, params), weight


def _robust(
    loss: torch.Tensor, logits: torch.Tensor, params: Mapping[str, Any], classes: int
) -> torch.Tensor:
    """Apply Ludwig's ``robust_lambda`` and ``confidence_penalty`` to a loss.

    Ludwig's ``robust_lambda`` (mix with the uniform loss) and ``confidence_penalty`` (penalise low
    entropy of the predicted distribution).
    """
    robust = float(params.get("robust_lambda") or 0.0)
    if robust:
        loss = (1 - robust) * loss + robust / classes
    penalty = float(params.get("confidence_penalty") or 0.0)
    if penalty:
        probs = torch.softmax(logits, dim=-1)
        entropy = -(probs * torch.log(probs.clamp(min=1e-12))).sum(dim=-1).mean()
        loss = loss - penalty * entropy
    return loss


def _regression(name: str, params: Mapping[str, Any]) -> LossFn:
    if name == "mean_squared_error":
        return lambda p, t: F.mse_loss(p.float(), t)
    if name == "mean_absolute_error":
        return lambda p, t: F.l1_loss(p.float(), t)
    if name == "root_mean_squared_error":
        return lambda p, t: torch.sqrt(F.mse_loss(p.float(), t) + 1e-12)
    if name == "huber":
        delta = float(params.get("delta") or 1.0)
        return lambda p, t: F.huber_loss(p.float(), t, delta=delta)
    raise ValueError(f"loss {name!r} is not available in the built-in engine")
