"""Combiners, built as Ludwig 0.11 builds them.

``concat`` (default), ``transformer`` and ``tabtransformer``. Each takes the list of encoder
outputs (``[batch, size_i]``, in input-feature order) and returns ``[batch, output_size]``.
``concat`` with ``num_fc_layers: 0`` (Ludwig's default) is a plain concatenation, so number
inputs + a binary output make a logistic regression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import FCStack, fc_stack
from ludwig_nb.engines.builtin.sequence_layers import SequenceReducer, transformer_stack

__all__ = ["COMBINERS", "Concat", "build_combiner"]


class Concat(nn.Module):
    """Ludwig's ``concat`` combiner: the encoder outputs side by side, then an FC stack.

    Args:
        params: The ``combiner`` section (``fc_layers``, ``output_size``, ``residual``, ...).
        sizes: The output size of each encoder, in input-feature order.
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int]):
        super().__init__()
        self.fc_stack: FCStack = fc_stack(sum(sizes), params, residual=bool(params.get("residual")))
        self.output_size = self.fc_stack.output_size
        # no layers, no input norm, no dropout (Ludwig's default): the stack is the identity
        stack = self.fc_stack
        self._identity = not stack.stack and stack.norm_layer is None and stack.dropout is None

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        """Concatenate the encoder outputs (``[batch, sum(sizes)]``) and run the FC stack."""
        return self.combine_flat(torch.cat(encoded, dim=1))

    def combine_flat(self, flat: torch.Tensor) -> torch.Tensor:
        """The FC stack over inputs already concatenated (``[batch, sum(sizes)]``)."""
        if self._identity:
            return flat
        result: torch.Tensor = self.fc_stack(flat)
        return result


def _fc(params: Mapping[str, Any], size: int) -> FCStack:
    """The FC stack after a transformer combiner (``fc_activation``, ``fc_dropout``)."""
    return fc_stack(
        size,
        params,
        activation_key="fc_activation",
        dropout_key="fc_dropout",
        residual=bool(params.get("fc_residual")),
    )


class TransformerCombiner(nn.Module):
    """Ludwig's ``transformer`` combiner.

    Each input feature becomes one position (projected to ``hidden_size``), Ludwig's transformer
    blocks mix them, ``reduce_output`` (mean) pools, then an FC stack (none by default).
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int]):
        super().__init__()
        hidden = int(params.get("hidden_size") or 256)
        mode = params.get("reduce_output", "mean")
        self.reduce_sequence = SequenceReducer(mode, len(sizes), hidden)
        self.projectors = nn.ModuleList(nn.Linear(size, hidden) for size in sizes)
        self.transformer_stack = transformer_stack({"dropout": 0.1, **params}, hidden)
        size = self.reduce_sequence.output_size
        self.fc_stack = _fc(params, size) if mode is not None else None
        self.output_size = self.fc_stack.output_size if self.fc_stack is not None else size

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        tokens = torch.stack([p(x) for p, x in zip(self.projectors, encoded, strict=True)], dim=1)
        hidden: torch.Tensor = self.reduce_sequence(self.transformer_stack(tokens))
        if self.fc_stack is None:
            return hidden
        result: torch.Tensor = self.fc_stack(hidden)
        return result


_UNEMBEDDABLE = ("number", "binary")


class TabTransformer(nn.Module):
    """Ludwig's ``tabtransformer`` combiner.

    Inputs other than number and binary are projected to ``hidden_size`` (less the width of an
    input-name embedding, or plus it with ``embed_input_feature_name: add``), mixed by Ludwig's
    transformer blocks and reduced (``concat`` by default); number and binary inputs are
    layer-normalised together (left as they are when they are a single value); both side by
    side, then an FC stack (none by default).
    """

    def __init__(self, params: Mapping[str, Any], sizes: Sequence[int], kinds: Sequence[str]):
        super().__init__()
        hidden = int(params.get("hidden_size") or 256)
        self.embedded = [i for i, kind in enumerate(kinds) if kind not in _UNEMBEDDABLE]
        self.plain = [i for i, kind in enumerate(kinds) if kind in _UNEMBEDDABLE]
        names = params.get("embed_input_feature_name")
        self.name_mode = names
        projected = hidden if names in (None, "add") else hidden - int(names)
        mode = params.get("reduce_output", "concat")
        self.reduce_sequence = SequenceReducer(mode, len(self.embedded), hidden)
        self.embed_i_f_name_layer = self._name_embedding(names, hidden, len(kinds))
        self.projectors = nn.ModuleList(nn.Linear(sizes[i], projected) for i in self.embedded)
        plain = sum(sizes[i] for i in self.plain)
        self.layer_norm: nn.Module = nn.LayerNorm(plain) if plain > 1 else nn.Identity()
        self.transformer_stack = transformer_stack({"dropout": 0.1, **params}, hidden)
        reduced = self.reduce_sequence.output_size if self.embedded else 0
        self.fc_stack = _fc(params, reduced + plain)
        self.output_size = self.fc_stack.output_size

    @staticmethod
    def _name_embedding(names: Any, hidden: int, rows: int) -> nn.Embedding | None:
        """One row per input feature (Ludwig sizes it so, though only the embedded use theirs)."""
        if names is None:
            return None
        width = hidden if names == "add" else int(names)
        weight = torch.empty(rows, width).uniform_(-1.0, 1.0)
        return nn.Embedding(rows, width, _weight=weight)

    def forward(self, encoded: list[torch.Tensor]) -> torch.Tensor:
        parts = []
        if self.embedded:
            rows = encoded[0].shape[0]
            tokens = [p(encoded[i]) for p, i in zip(self.projectors, self.embedded, strict=True)]
            hidden = torch.stack(tokens, dim=1)
            if self.embed_i_f_name_layer is not None:
                table = self.embed_i_f_name_layer.weight[: len(self.embedded)]
                names = table.unsqueeze(0).expand(rows, -1, -1)
                hidden = (
                    hidden + names if self.name_mode == "add" else torch.cat([hidden, names], -1)
                )
            parts.append(self.reduce_sequence(self.transformer_stack(hidden)))
        if self.plain:
            parts.append(self.layer_norm(torch.cat([encoded[i] for i in self.plain], dim=1)))
        result: torch.Tensor = self.fc_stack(torch.cat(parts, dim=1))
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
