"""Combiners: ``concat`` (default), ``transformer`` and ``tabtransformer``.

Each takes the list of encoder outputs (``[batch, size_i]``, in input-feature order) and
returns ``[batch, output_size]``. ``concat`` with ``num_fc_layers: 0`` (Ludwig's default)
is a plain concatenation, so number inputs + a binary output make a logistic regression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import FCStack, SequenceReducer, fc_layer_specs

__all__ = ["COMBINERS", "Concat", "build_combiner"]


class Concat(nn.Module):
    """Ludwig's ``concat`` combiner: the encoder outputs side by side, then an FC stack.

    Args:
        params: The ``combiner`` section (``fc_layers``, ``output_size``, ``residual``, ...).
        sizes: The output size of each encoder, in input-feature order.
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int]):
        super().__init__()
        self.fc = FCStack(
            sum(sizes), fc_layer_specs(params, default_size=256), bool(params.get("residual"))
        )
        self.output_size = self.fc.output_size

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        """Concatenate the encoder outputs (``[batch, sum(sizes)]``) and run the FC stack."""
        return self.combine_flat(torch.cat(encoded, dim=1))

    def combine_flat(self, flat: torch.Tensor) -> torch.Tensor:
        """The FC stack over inputs already concatenated (``[batch, sum(sizes)]``)."""
        if not self.fc.blocks:  # num_fc_layers: 0 (Ludwig's default) is the concatenation
            return flat
        result: torch.Tensor = self.fc(flat)
        return result


def _transformer(params: Mapping[str, Any], hidden: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(
        hidden,
        int(params.get("num_heads") or 8),
        dim_feedforward=int(params.get("transformer_output_size") or 256),
        dropout=float(params.get("dropout", 0.1) or 0.0),
        batch_first=True,
    )
    return nn.TransformerEncoder(
        layer, int(params.get("num_layers") or 1), enable_nested_tensor=False
    )


class TransformerCombiner(nn.Module):
    """Each input feature becomes one token (projected to ``hidden_size``).

    A transformer mixes them; ``reduce_output`` (mean) pools; then an FC stack.
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int]):
        super().__init__()
        hidden = int(params.get("hidden_size") or 256)
        self.project = nn.ModuleList(nn.Linear(size, hidden) for size in sizes)
        self.encoder = _transformer(params, hidden)
        reduce = params.get("reduce_output", "mean") or "mean"
        self.reducer = SequenceReducer(reduce, hidden, len(sizes))
        self.fc = FCStack(self.reducer.output_size, fc_layer_specs(params, default_size=256))
        self.output_size = self.fc.output_size

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        tokens = torch.stack([p(x) for p, x in zip(self.project, encoded, strict=True)], dim=1)
        out = self.encoder(tokens)
        mask = torch.ones(out.shape[:2], dtype=torch.bool, device=out.device)
        result: torch.Tensor = self.fc(self.reducer(out, mask))
        return result


class TabTransformer(nn.Module):
    """Ludwig's ``tabtransformer`` combiner.

    Categorical-like inputs (category, text, sequence, set, bag, date) go through a transformer as
    tokens (plus a learned column embedding); the other inputs (number, binary, vector) are
    layer-normalised; both are concatenated, then an FC stack.
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int], kinds: Sequence[str]):
        super().__init__()
        hidden = int(params.get("hidden_size") or 256)
        self.tokens = [i for i, k in enumerate(kinds) if k not in ("number", "binary", "vector")]
        self.plain = [i for i in range(len(kinds)) if i not in self.tokens]
        self.project = nn.ModuleList(nn.Linear(sizes[i], hidden) for i in self.tokens)
        self.columns = nn.Parameter(torch.zeros(max(1, len(self.tokens)), hidden))
        self.encoder = _transformer(params, hidden) if self.tokens else None
        plain_size = sum(sizes[i] for i in self.plain)
        self.norm = nn.LayerNorm(plain_size) if plain_size else None
        width = hidden * len(self.tokens) + plain_size
        self.fc = FCStack(width, fc_layer_specs(params, default_size=256))
        self.output_size = self.fc.output_size

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        parts = []
        if self.encoder is not None:
            tok = [p(encoded[i]) for p, i in zip(self.project, self.tokens, strict=True)]
            x = torch.stack(tok, dim=1) + self.columns[: len(tok)]
            parts.append(self.encoder(x).flatten(start_dim=1))
        if self.norm is not None:
            parts.append(self.norm(torch.cat([encoded[i] for i in self.plain], dim=1)))
        result: torch.Tensor = self.fc(torch.cat(parts, dim=1))
        return result


COMBINERS = ("concat", "transformer", "tabtransformer")


def build_combiner(
    params: Mapping[str, Any], sizes: Sequence[int], kinds: Sequence[str]
) -> nn.Module:
    """The combiner module; raises ``ValueError`` for one the built-in engine lacks."""
    name = params.get("type") or "concat"
    if name == "concat":
        return Concat(params, sizes)
    if name == "transformer":
        return TransformerCombiner(params, sizes)
    if name == "tabtransformer":
        return TabTransformer(params, sizes, kinds)
    raise ValueError(f"combiner {name!r} is not available in the built-in engine")
