"""The ECD network.

Input feature encoders -> combiner -> output feature decoders, its combined loss, and the mapping of
raw outputs to data space (probabilities, values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from ludwig_nb.engines.builtin.combiners import Concat, TabTransformer, build_combiner
from ludwig_nb.engines.builtin.decoders import build_decoder
from ludwig_nb.engines.builtin.device import Batch
from ludwig_nb.engines.builtin.encoders import build_encoder
from ludwig_nb.engines.builtin.losses import build_loss
from ludwig_nb.engines.builtin.preprocessing.number_scale import denormalize
from ludwig_nb.engines.builtin.seed_stream import probe_each
from ludwig_nb.engines.builtin.stacks import STACKED, input_stacks, stackable_inputs

__all__ = [
    "ECD",
    "STACKED",
    "Objective",
    "input_stacks",
    "stackable_inputs",
    "targets_to_data_space",
    "to_data_space",
]


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
        if not isinstance(self.combiner, TabTransformer):  # it knows its size without a probe
            probe_each(self.combiner, sizes)  # Ludwig's, for the outputs' input size
        self.decoders = nn.ModuleList(
            build_decoder(f, meta[f["name"]], _width(self.combiner))
            for f in config["output_features"]
        )
        self._stacked = set(stackable_inputs(config))
        #: (name, encoder) of the inputs that are not stacked
        self._encoded = [
            (n, enc)
            for n, enc in zip(self.input_names, self.encoders, strict=True)
            if n not in self._stacked
        ]
        self._layout: torch.Tensor | None
        self.register_buffer("_layout", self._concat_layout(sizes), persistent=False)

    def _concat_layout(self, sizes: list[int]) -> torch.Tensor | None:
        """Column order that puts ``cat([stacked, *encoded])`` back into input-feature order.

        None when it already is (stacked inputs first, or none stacked).
        """
        starts, at = {}, 0
        for name, size in zip(self.input_names, sizes, strict=True):
            starts[name] = range(at, at + size)
            at += size
        order = [name for name in self.input_names if name in self._stacked]
        order += [name for name, _ in self._encoded]
        source = [i for name in order for i in starts[name]]  # original column of each
        if source == sorted(source):
            return None
        return torch.tensor(sorted(range(len(source)), key=source.__getitem__))

    def _combiner_inputs(self, inputs: Batch) -> list[torch.Tensor]:
        """Per-feature encodings in input order (stacked inputs split back into columns)."""
        encoded = {n: enc(*inputs[n]) for n, enc in self._encoded}
        if self._stacked:
            columns = inputs[STACKED][0].unbind(dim=1)
            stacked = [n for n in self.input_names if n in self._stacked]
            encoded.update((n, c.unsqueeze(1)) for n, c in zip(stacked, columns, strict=True))
        return [encoded[n] for n in self.input_names]

    def forward(self, inputs: Batch) -> dict[str, torch.Tensor]:
        """Encode, combine, decode: the raw outputs ``{output feature: tensor}`` of a batch."""
        if isinstance(self.combiner, Concat):
            parts = [inputs[STACKED][0]] if self._stacked else []
            parts += [enc(*inputs[n]) for n, enc in self._encoded]
            flat = torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]
            if self._layout is not None:
                flat = flat.index_select(1, self._layout)
            combined = self.combiner.combine_flat(flat)
        else:
            combined = self.combiner(self._combiner_inputs(inputs))
        return {n: dec(combined) for n, dec in zip(self.output_names, self.decoders, strict=True)}


def _width(module: nn.Module) -> int:
    """The ``output_size`` every encoder and combiner here sets in ``__init__``."""
    return int(vars(module)["output_size"])


class Objective:
    """The combined loss: sum over outputs of ``loss.weight`` x that output's loss.

    Args:
        config: The rendered config (its output features' ``loss`` sections).
        metadata: The training-set metadata (``metadata["features"]`` per output feature).
    """

    def __init__(self, config: Mapping[str, Any], metadata: Mapping[str, Any]):
        meta = metadata["features"]
        self.losses = {f["name"]: build_loss(f, meta[f["name"]]) for f in config["output_features"]}

    def __call__(
        self, outputs: Mapping[str, torch.Tensor], targets: Batch
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The weighted total loss and each output feature's loss for one batch."""
        parts = {name: fn(outputs[name], targets[name][0]) for name, (fn, _) in self.losses.items()}
        total: torch.Tensor | None = None
        for name, value in parts.items():  # no 0 + ..., no 1.0 * ...: fewer autograd nodes
            weight = self.losses[name][1]
            weighted = value if weight == 1.0 else weight * value
            total = weighted if total is None else total + weighted
        assert total is not None
        return total, parts


def to_data_space(kind: str, raw: torch.Tensor, meta: Mapping[str, Any]) -> np.ndarray:
    """Turn raw outputs into probabilities or values.

    Probabilities (binary ``[n]``, category/set ``[n, classes]``) or values (number ``[n]``
    de-normalised, vector ``[n, size]``) as float64 numpy.
    """
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
    """Targets as numpy in the data's own units (numbers de-normalised, other kinds unchanged)."""
    array = target.detach().cpu().numpy()
    return denormalize(array.astype(np.float64), meta) if kind == "number" else array
