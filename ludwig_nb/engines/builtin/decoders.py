"""Output decoders, built as Ludwig 0.11 builds them.

Each output feature has Ludwig's output FC stack (``decoder.fc_layers`` /
``decoder.num_fc_layers`` x ``fc_output_size``, none by default, with the ``fc_`` defaults) and
then its decoder: ``regressor`` (binary, number), ``classifier`` (category, set) or ``projector``
(vector, with its ``activation``, ``multiplier`` and ``clip``), a linear layer initialised by
the decoder's ``weights_initializer`` (xavier_uniform) and ``bias_initializer`` (zeros).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import activation, fc_stack, initialize

__all__ = ["build_decoder", "output_width"]

_DECODER = {
    "binary": "regressor",
    "number": "regressor",
    "category": "classifier",
    "set": "classifier",
    "vector": "projector",
}


def output_width(kind: str, meta: Mapping[str, Any]) -> int:
    """How many numbers the decoder emits per row for an output feature."""
    if kind in ("binary", "number"):
        return 1
    if kind in ("category", "set"):
        return len(meta["idx2str"])
    return int(meta["vector_size"])


class Dense(nn.Module):
    """Ludwig's decoder ``Dense``: one linear layer with the configured initialisers."""

    def __init__(self, params: Mapping[str, Any], input_size: int, width: int):
        super().__init__()
        self.dense = nn.Linear(input_size, width, bias=bool(params.get("use_bias", True)))
        initialize(self.dense.weight, params.get("weights_initializer", "xavier_uniform"))
        if self.dense.bias is not None:
            initialize(self.dense.bias, params.get("bias_initializer", "zeros"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.dense(x)
        return result


class Decoder(nn.Module):
    """An output feature's FC stack and decoder; returns raw logits / values (model space)."""

    def __init__(self, feature: Mapping[str, Any], meta: Mapping[str, Any], input_size: int):
        super().__init__()
        params = dict(feature.get("decoder") or {})
        kind = feature["type"]
        if params.get("type") not in (None, _DECODER[kind]):
            raise ValueError(
                f"{kind} output {feature['name']!r}: no {params['type']!r} decoder here"
            )
        self.fc_stack = fc_stack(
            input_size,
            params,
            prefix="fc_",
            activation_key="fc_activation",
            dropout_key="fc_dropout",
        )
        stack = self.fc_stack
        self._stacked = (
            bool(stack.stack) or stack.norm_layer is not None or stack.dropout is not None
        )
        self.decoder = Dense(params, self.fc_stack.output_size, output_width(kind, meta))
        projector = kind == "vector"
        self.activation = activation(params.get("activation") if projector else None)
        self.multiplier = float(params.get("multiplier") or 1.0) if projector else 1.0
        clip = params.get("clip") if projector else None
        self.clip = (float(clip[0]), float(clip[1])) if clip is not None else None
        self.squeeze = kind in ("binary", "number")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._stacked:  # Ludwig's default has no FC layers: skip the call
            x = self.fc_stack(x)
        out = self.decoder(x)
        if not isinstance(self.activation, nn.Identity):
            out = self.activation(out)
        if self.multiplier != 1.0:
            out = out * self.multiplier
        if self.clip is not None:
            out = out.clamp(*self.clip)
        result: torch.Tensor = out.squeeze(-1) if self.squeeze else out
        return result


def build_decoder(
    feature: Mapping[str, Any], meta: Mapping[str, Any], input_size: int
) -> nn.Module:
    """The decoder for one output feature (raw logits / values, model space)."""
    return Decoder(feature, meta, input_size)
