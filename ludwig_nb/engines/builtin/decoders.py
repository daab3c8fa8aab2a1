"""Output decoders (Ludwig defaults).

``regressor`` (binary, number), ``classifier`` (category, set), ``projector`` (vector), each after
an optional FC stack (``decoder.num_fc_layers`` x ``fc_output_size``, default 0 layers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import FCStack, activation, fc_layer_specs

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


class Decoder(nn.Module):
    def __init__(self, feature: Mapping[str, Any], meta: Mapping[str, Any], input_size: int):
        super().__init__()
        params = {**feature, **(feature.get("decoder") or {})}
        name = (feature.get("decoder") or {}).get("type")
        kind = feature["type"]
        if name not in (None, _DECODER[kind]):
            raise ValueError(f"{kind} output {feature['name']!r}: no {name!r} decoder here")
        self.fc = FCStack(input_size, fc_layer_specs(params, prefix="fc_", default_size=256))
        self.width = output_width(kind, meta)
        self.project = nn.Linear(
            self.fc.output_size, self.width, bool(params.get("use_bias", True))
        )
        self.activation = activation(params.get("activation") if kind == "vector" else None)
        self.squeeze = kind in ("binary", "number")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fc.blocks:  # Ludwig's default decoder has no FC layers: skip the calls
            x = self.fc(x)
        out = self.project(x)
        if not isinstance(self.activation, nn.Identity):
            out = self.activation(out)
        result: torch.Tensor = out.squeeze(-1) if self.squeeze else out
        return result


def build_decoder(
    feature: Mapping[str, Any], meta: Mapping[str, Any], input_size: int
) -> nn.Module:
    """The decoder for one output feature (raw logits / values, model space)."""
    return Decoder(feature, meta, input_size)
