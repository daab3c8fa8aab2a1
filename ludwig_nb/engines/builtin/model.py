"""The ECD network: input feature encoders -> combiner -> output feature decoders, its
combined loss, and the mapping of raw outputs to data space (probabilities, values)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from ludwig_nb.data.preprocessing.numeric import denormalize
from ludwig_nb.engines.builtin.combiners import build_combiner
from ludwig_nb.engines.builtin.decoders import build_decoder
from ludwig_nb.engines.builtin.device import Batch
from ludwig_nb.engines.builtin.encoders import build_encoder
from ludwig_nb.engines.builtin.losses import build_loss

__all__ = ["ECD", "Objective", "targets_to_data_space", "to_data_space"]


class ECD(nn.Module):
    """Built from a rendered config and the preprocessing metadata.

    ``forward(inputs)`` takes ``{input name: tensors}`` and returns ``{output name: raw
    output}`` (logits for binary/category/set, model-space values for number/vector).
    ``tied`` input features share the encoder of the feature they name.
    """

    def __init__(self, config: Mapping[str, Any], metadata: Mapping[str, Any]):
        super().__init__()
        meta = metadata["features"]
        inputs = list(config["input_features"])
        self.input_names = [f["name"] for f in inputs]
        self.output_names = [f["name"] for f in config["output_features"]]
        built: dict[str, nn.Module] = {}
        for feature in inputs:
            tied = feature.get("tied")
            built[feature["name"]] = (
                built[tied] if tied in built else build_encoder(feature, meta[feature["name"]])
            )
        self.encoders = nn.ModuleList(built[name] for name in self.input_names)
        sizes = [_width(enc) for enc in self.encoders]
        kinds = [f["type"] for f in inputs]
        self.combiner = build_combiner(config.get("combiner") or {}, sizes, kinds)
        self.decoders = nn.ModuleList(
            build_decoder(f, meta[f["name"]], _width(self.combiner))
            for f in config["output_features"]
        )

    def forward(self, inputs: Batch) -> dict[str, torch.Tensor]:
        encoded = [enc(*inputs[n]) for n, enc in zip(self.input_names, self.encoders, strict=True)]
        combined = self.combiner(encoded)
        return {n: dec(combined) for n, dec in zip(self.output_names, self.decoders, strict=True)}


def _width(module: nn.Module) -> int:
    """The ``output_size`` every encoder and combiner here sets in ``__init__``."""
    return int(vars(module)["output_size"])


class Objective:
    """The combined loss: sum over outputs of ``loss.weight`` x that output's loss."""

    def __init__(self, config: Mapping[str, Any], metadata: Mapping[str, Any]):
        meta = metadata["features"]
        self.losses = {f["name"]: build_loss(f, meta[f["name"]]) for f in config["output_features"]}

    def __call__(
        self, outputs: Mapping[str, torch.Tensor], targets: Batch
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        parts = {name: fn(outputs[name], targets[name][0]) for name, (fn, _) in self.losses.items()}
        total = sum(self.losses[name][1] * value for name, value in parts.items())
        assert isinstance(total, torch.Tensor)
        return total, parts


def to_data_space(kind: str, raw: torch.Tensor, meta: Mapping[str, Any]) -> np.ndarray:
    """Probabilities (binary ``[n]``, category/set ``[n, classes]``) or values
    (number ``[n]`` de-normalised, vector ``[n, size]``) as float64 numpy."""
    raw = raw.detach().float()
    if kind in ("binary", "set"):
        out = torch.sigmoid(raw)
    elif kind == "category":
        out = torch.softmax(raw, dim=-1)
    else:
        out = raw
    array = out.cpu().numpy().astype(np.float64)
    return denormalize(array, meta) if kind == "number" else array


def targets_to_data_space(kind: str, target: torch.Tensor, meta: Mapping[str, Any]) -> np.ndarray:
    array = target.detach().cpu().numpy()
    return denormalize(array.astype(np.float64), meta) if kind == "number" else array
