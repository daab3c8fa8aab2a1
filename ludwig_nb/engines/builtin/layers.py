"""Building blocks shared by encoders, combiners and decoders.

Ludwig's ``FCStack``, activations and sequence reduction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

__all__ = [
    "FCStack",
    "OwnedDropout",
    "SequenceReducer",
    "activation",
    "fc_layer_specs",
    "own_dropout",
    "reduce_sequence",
]

_ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "elu": nn.ELU,
    "leakyRelu": nn.LeakyReLU,
    "gelu": nn.GELU,
    "selu": nn.SELU,
    "softplus": nn.Softplus,
}


def activation(name: str | None) -> nn.Module:
    """The activation module for a Ludwig activation name (``None``/"linear": identity)."""
    if name in (None, "linear", "none"):
        return nn.Identity()
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}")
    return _ACTIVATIONS[name]()


def fc_layer_specs(
    params: Mapping[str, Any], *, prefix: str = "", default_layers: int = 0, default_size: int = 256
) -> list[dict[str, Any]]:
    """Ludwig's ``fc_layers`` (list of dicts) or ``num_fc_layers`` x ``output_size``.

    ``prefix`` is ``"fc_"`` for decoders (``fc_output_size``, ``fc_dropout``...).
    """
    defaults = {
        "output_size": params.get(f"{prefix}output_size") or default_size,
        "activation": params.get(f"{prefix}activation", "relu"),
        "dropout": params.get(f"{prefix}dropout") or 0.0,
        "norm": params.get(f"{prefix}norm"),
        "use_bias": params.get(f"{prefix}use_bias", True),
    }
    layers = params.get("fc_layers")
    if layers:
        return [{**defaults, **layer} for layer in layers]
    count = params.get("num_fc_layers")
    count = default_layers if count is None else int(count)
    return [dict(defaults) for _ in range(count)]


class FCStack(nn.Module):
    """Fully connected layers: linear -> norm -> activation -> dropout, per spec.

    ``residual``: add the block input to its output where the sizes match.

    Args:
        input_size: Features of the input.
        specs: One mapping per layer (``output_size``, ``use_bias``, ``norm``, ``activation``,
            ``dropout``).
        residual: Add the block input to its output where the sizes match.
    """

    def __init__(self, input_size: int, specs: Sequence[Mapping[str, Any]], residual: bool = False):
        super().__init__()
        self.blocks = nn.ModuleList()
        self.residual = residual
        size = input_size
        for spec in specs:
            out = int(spec["output_size"])
            linear = nn.Linear(size, out, bias=bool(spec.get("use_bias", True)))
            nn.init.xavier_uniform_(linear.weight)  # Ludwig's weights_initializer default
            parts: list[nn.Module] = [linear]
            norm = spec.get("norm")
            if norm == "batch":
                parts.append(nn.BatchNorm1d(out))
            elif norm == "layer":
                parts.append(nn.LayerNorm(out))
            parts.append(activation(spec.get("activation", "relu")))
            if spec.get("dropout"):
                parts.append(nn.Dropout(float(spec["dropout"])))
            self.blocks.append(nn.Sequential(*parts))
            size = out
        self.output_size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the fully connected blocks, adding residuals where the shapes match."""
        for block in self.blocks:
            y: torch.Tensor = block(x)
            x = x + y if self.residual and y.shape == x.shape else y
        return x


def reduce_sequence(hidden: torch.Tensor, mask: torch.Tensor, mode: str | None) -> torch.Tensor:
    """Reduce ``[batch, time, dim]`` to ``[batch, dim]`` over the unpadded steps.

    ``mask`` is True where a token is. Modes: sum, mean/avg, max, last, concat/null (flatten).
    """
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    if mode == "sum":
        return (hidden * weights).sum(dim=1)
    if mode in ("mean", "avg"):
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
    if mode == "max":
        return hidden.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1).clamp(min=-1e9)
    if mode == "last":
        last = (mask.long().sum(dim=1) - 1).clamp(min=0)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
    return (hidden * weights).flatten(start_dim=1)


class SequenceReducer(nn.Module):
    """Ludwig's ``SequenceReducer``: ``[batch, time, dim]`` -> ``[batch, output_size]``.

    ``mode``: sum, mean/avg, max, last, concat/none (flatten: ``dim * length``) or
    attention (Ludwig's feed-forward attention: ``tanh(W1 h) -> w2`` scores, softmax over
    the real tokens, the weighted sum of ``h``; ``hidden_size`` 256 as in Ludwig).

    Args:
        mode: The reduction (see above).
        dim: The hidden size of each token.
        length: The number of tokens (for ``concat``).
        attention_size: The hidden size of the attention scorer.
    """

    def __init__(self, mode: str, dim: int, length: int, attention_size: int = 256):
        super().__init__()
        self.mode = "concat" if mode in ("none", "concat") else mode
        self.output_size = dim * length if self.mode == "concat" else dim
        self.attention = (
            nn.Sequential(nn.Linear(dim, attention_size), nn.Tanh(), nn.Linear(attention_size, 1))
            if self.mode == "attention"
            else None
        )

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Reduce ``hidden`` ``[batch, time, dim]`` over the tokens ``mask`` marks."""
        if self.attention is None:
            return reduce_sequence(hidden, mask, self.mode)
        scores = self.attention(hidden).squeeze(-1).masked_fill(~mask, -1e9)
        weights = torch.softmax(scores.float(), dim=1).to(hidden.dtype).unsqueeze(-1)
        return (weights * hidden).sum(dim=1)


class OwnedDropout(nn.Module):
    """``nn.Dropout`` that draws its masks from a run's own ``torch.Generator``.

    So that runs training at once in one process do not share torch's global generator (two runs
    with one seed then reproduce their solo results).
    """

    def __init__(self, p: float, generator: torch.Generator):
        super().__init__()
        self.p = float(p)
        self.generator = generator

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Zero elements with probability ``p`` from the run's generator (identity in eval mode)."""
        if not self.training or self.p == 0.0:
            return x
        keep = 1.0 - self.p
        mask = torch.empty_like(x).bernoulli_(keep, generator=self.generator)
        return x * mask / keep

    def __deepcopy__(self, memo: dict[int, Any]) -> OwnedDropout:  # share the generator
        return OwnedDropout(self.p, self.generator)


class OwnedAttention(nn.MultiheadAttention):
    """``nn.MultiheadAttention`` whose attention dropout draws from a run's own generator.

    Self-attention, one embedding size, ``batch_first``; made from an existing one by
    :func:`own_dropout`, with the same parameters (a saved state dict loads either way). Outside
    training, or with ``dropout`` 0, it is torch's own forward.
    """

    attn_dropout: OwnedDropout

    @classmethod
    def owning(cls, source: nn.MultiheadAttention, generator: torch.Generator) -> OwnedAttention:
        owned: OwnedAttention = cls.__new__(cls)
        owned.__dict__.update(source.__dict__)  # the same parameters, not copies
        owned.attn_dropout = OwnedDropout(source.dropout, generator)
        return owned

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        attn_mask: torch.Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if not self.training or self.dropout == 0.0 or attn_mask is not None:
            return super().forward(
                query,
                key,
                value,
                key_padding_mask=key_padding_mask,
                need_weights=need_weights,
                attn_mask=attn_mask,
                average_attn_weights=average_attn_weights,
                is_causal=is_causal,
            )
        rows, length, size = query.shape
        heads = self.num_heads
        q, k, v = (
            nn.functional.linear(x, w, b).view(rows, -1, heads, size // heads).transpose(1, 2)
            for x, w, b in zip(
                (query, key, value),
                self.in_proj_weight.chunk(3),
                self.in_proj_bias.chunk(3),
                strict=True,
            )
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(size // heads)
        if key_padding_mask is not None:
            pad = key_padding_mask[:, None, None, :]
            scores = (
                scores.masked_fill(pad, float("-inf")) if pad.dtype == torch.bool else scores + pad
            )
        weights = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(rows, length, size)
        return self.out_proj(out), None


def own_dropout(module: nn.Module, generator: torch.Generator) -> int:
    """Make every dropout under ``module`` draw from ``generator``.

    Replace every ``nn.Dropout`` under ``module`` by :class:`OwnedDropout` and every self-attention
    with dropout by :class:`OwnedAttention`, both over ``generator``; returns how many were
    replaced.
    """
    count = 0
    for parent in module.modules():
        for name, child in list(parent.named_children()):
            if type(child) is nn.Dropout:
                setattr(parent, name, OwnedDropout(child.p, generator))
                count += 1
            elif type(child) is nn.MultiheadAttention and child.dropout > 0:
                setattr(parent, name, OwnedAttention.owning(child, generator))
                count += 1
    return count
