"""Dropout that draws from a run's own random generator, not torch's global one.

So that runs training at once in one process do not share torch's global generator (two runs
with one seed then reproduce their solo results). :func:`own_dropout` swaps a model's dropouts
for these after it is built.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

__all__ = ["OwnedDropout", "own_dropout"]


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
