"""Input feature encoders, built as Ludwig 0.11 builds them from the same config.

number/binary: passthrough, dense · category: dense (embedding), onehot, passthrough ·
vector: dense, passthrough · set/bag/date: embed. Text and sequence encoders are in
``sequence_encoders.py``. Every encoder returns ``[batch, output_size]``; module and parameter
names and their order follow Ludwig's, and so do the initialisers (embeddings uniform(-1, 1)
unless the config names one, their width capped at the vocabulary's size).

Where the built-in engine reads a config key that Ludwig 0.11 ignores, it follows the config
(see ``docs/guide/ludwig_parity.md``): the dense encoder's ``fc_layers``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import embedding_matrix, fc_stack
from ludwig_nb.engines.builtin.sequence_encoders import SEQUENCE_ENCODERS, build_sequence_encoder

__all__ = ["ENCODERS", "build_encoder"]


class Passthrough(nn.Module):
    """Values as they are, as floats: ``[batch]`` -> ``[batch, 1]``, ``[batch, n]`` unchanged."""

    def __init__(self, size: int = 1):
        super().__init__()
        self.output_size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float()
        return x.unsqueeze(-1) if x.dim() == 1 else x


class Dense(nn.Module):
    """Ludwig's ``dense`` encoder: an FC stack over a number, a binary or a vector."""

    def __init__(self, params: Mapping[str, Any], input_size: int = 1):
        super().__init__()
        self.passthrough = Passthrough(input_size)
        self.fc_stack = fc_stack(input_size, {"num_layers": 1, **params}, num_key="num_layers")
        self.output_size = self.fc_stack.output_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.fc_stack(self.passthrough(x))
        return result


class Embed(nn.Module):
    """Ludwig's ``Embed``: one embedding per row (category, date parts), then dropout."""

    def __init__(
        self,
        vocab_size: int,
        size: int,
        *,
        initializer: Any = None,
        trainable: bool = True,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.embeddings = embedding_matrix(
            vocab_size, size, initializer=initializer, trainable=trainable
        )
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None
        self.output_size = self.embeddings.embedding_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # the lookup without a second module call (plain indexing)
        embedded = nn.functional.embedding(ids, self.embeddings.weight)
        return self.dropout(embedded) if self.dropout is not None else embedded


class CategoryEmbed(nn.Module):
    """Ludwig's category ``dense`` encoder: an embedding of ``min(vocab, embedding_size)``."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int):
        super().__init__()
        self.embed = Embed(
            vocab_size,
            int(params.get("embedding_size") or 50),
            initializer=params.get("embedding_initializer"),
            trainable=bool(params.get("embeddings_trainable", True)),
            dropout=float(params.get("dropout") or 0.0),
        )
        self.output_size = self.embed.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.embed(ids)
        return result


class OneHot(nn.Module):
    def __init__(self, vocab_size: int):
        super().__init__()
        self.output_size = vocab_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(x, self.output_size).float()


class SetEmbed(nn.Module):
    """Ludwig's set / bag ``embed`` encoder.

    The sum of the embeddings of the items present (bag: weighted by their counts), dropout,
    then an FC stack (no layers by default; its input dropout is the same ``dropout``, as in
    Ludwig). Items arrive as padded ids and their counts (0 where padded).
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, weighted: bool):
        super().__init__()
        self.embeddings = embedding_matrix(
            vocab_size,
            int(params.get("embedding_size") or 50),
            initializer=params.get("weights_initializer", "xavier_uniform"),
            force_size=weighted and bool(params.get("force_embedding_size")),
            trainable=bool(params.get("embeddings_trainable", True)),
        )
        dropout = float(params.get("dropout") or 0.0)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None
        self.weighted = weighted
        self.fc_stack = fc_stack(self.embeddings.embedding_dim, {"output_size": 10, **params})
        self.output_size = self.fc_stack.output_size

    def forward(self, ids: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        weights = counts if self.weighted else (counts > 0).to(counts.dtype)
        summed = nn.functional.embedding_bag(
            ids, self.embeddings.weight, mode="sum", per_sample_weights=weights
        )
        if self.dropout is not None:
            summed = self.dropout(summed)
        result: torch.Tensor = self.fc_stack(summed)
        return result


class DateEmbed(nn.Module):
    """Ludwig's date ``embed`` encoder.

    The year through a one-unit FC layer (no activation), embeddings of month, day, weekday, day
    of the year, hour, minute and second, and the second of the day as ``cos(2 pi s / 86400)``;
    then an FC stack (none by default).
    """

    _PARTS = (
        ("month", 12, 1),
        ("day", 31, 1),
        ("weekday", 7, 0),
        ("yearday", 366, 1),
        ("hour", 24, 0),
        ("minute", 60, 0),
        ("second", 60, 0),
    )  # name, values, offset of the first value

    def __init__(self, params: Mapping[str, Any]):
        super().__init__()
        size = int(params.get("embedding_size") or 10)
        dropout = float(params.get("dropout") or 0.0)
        init = params.get("weights_initializer", "xavier_uniform")
        year = {**params, "fc_layers": None, "num_fc_layers": 1, "output_size": 1}
        self.year_fc = fc_stack(1, {**year, "activation": None, "norm": None})
        for name, values, _ in self._PARTS:
            embed = Embed(values, size, initializer=init, dropout=dropout)
            self.add_module(f"embed_{name}", embed)
        width = 1 + sum(getattr(self, f"embed_{n}").output_size for n, _, _ in self._PARTS) + 1
        self.fc_stack = fc_stack(width, {"output_size": 10, **params})
        self.output_size = self.fc_stack.output_size

    def forward(self, parts: torch.Tensor) -> torch.Tensor:
        hidden = [self.year_fc(parts[:, 0:1].float())]
        for index, (name, _, offset) in enumerate(self._PARTS, start=1):
            hidden.append(getattr(self, f"embed_{name}")(parts[:, index] - offset))
        hidden.append(torch.cos(parts[:, 8:9].float() * 2 * math.pi / 86400))
        result: torch.Tensor = self.fc_stack(torch.cat(hidden, dim=1))
        return result


#: feature type -> the encoders the built-in engine runs for it
ENCODERS = {
    "number": ("passthrough", "dense"),
    "binary": ("passthrough", "dense"),
    "category": ("dense", "onehot", "passthrough"),
    "text": SEQUENCE_ENCODERS,
    "sequence": SEQUENCE_ENCODERS,
    "set": ("embed",),
    "bag": ("embed",),
    "vector": ("dense", "passthrough"),
    "date": ("embed",),
    "image": ("stacked_cnn", "_resnet_legacy", "mlp_mixer", "_vit_legacy"),  # + torchvision's
}
_DEFAULT = {
    "number": "passthrough",
    "binary": "passthrough",
    "category": "dense",
    "text": "parallel_cnn",
    "sequence": "embed",
    "set": "embed",
    "bag": "embed",
    "vector": "dense",
    "date": "embed",
    "image": "stacked_cnn",
}


def build_encoder(feature: Mapping[str, Any], meta: Mapping[str, Any]) -> nn.Module:
    """The encoder module for one input feature.

    Raises ``ValueError`` for an encoder the built-in engine does not have (the config layer rejects
    those first).
    """
    kind = feature["type"]
    if kind == "image":  # image/encoders.py: Ludwig's own in plain torch, torchvision's
        from ludwig_nb.engines.builtin.image.encoders import build_image_encoder

        return build_image_encoder(feature, meta)
    params = dict(feature.get("encoder") or {})
    name = params.get("type") or _DEFAULT[kind]
    if name not in ENCODERS[kind]:
        raise ValueError(f"{kind} feature {feature['name']!r}: no {name!r} encoder here")
    vocab = len(meta.get("idx2str") or ())
    if kind in ("number", "binary", "vector"):
        width = int(meta.get("vector_size", 1))
        return Passthrough(width) if name == "passthrough" else Dense(params, width)
    if kind == "category":
        if name == "onehot":
            return OneHot(vocab)
        return Passthrough(1) if name == "passthrough" else CategoryEmbed(params, vocab)
    if kind in ("text", "sequence"):
        return build_sequence_encoder(name, params, vocab, int(meta["max_sequence_length"]))
    if kind in ("set", "bag"):
        return SetEmbed(params, vocab, weighted=kind == "bag")
    return DateEmbed(params)
