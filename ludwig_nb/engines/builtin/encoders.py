"""Input feature encoders (Ludwig names and defaults).

number/binary: passthrough, dense · category: dense (embedding), onehot, passthrough ·
text/sequence: embed, parallel_cnn, rnn, transformer · set/bag: embed · vector: dense,
passthrough · date: embed. Every encoder returns ``[batch, output_size]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import FCStack, SequenceReducer, fc_layer_specs

__all__ = ["ENCODERS", "build_encoder"]


class Passthrough(nn.Module):
    """Numbers as they are: ``[batch]`` -> ``[batch, 1]``, ``[batch, n]`` unchanged."""

    def __init__(self, size: int = 1):
        super().__init__()
        self.output_size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float()
        return x.unsqueeze(-1) if x.dim() == 1 else x


class Dense(nn.Module):
    """An FC stack over a number, a binary or a vector (``num_layers`` x ``output_size``)."""

    def __init__(self, params: Mapping[str, Any], input_size: int = 1):
        super().__init__()
        specs = fc_layer_specs(
            {**params, "num_fc_layers": params.get("num_layers", 1)}, default_size=256
        )
        self.passthrough = Passthrough(input_size)
        self.stack = FCStack(input_size, specs)
        self.output_size = self.stack.output_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.stack(self.passthrough(x))
        return result


class CategoryEmbed(nn.Module):
    def __init__(self, params: Mapping[str, Any], vocab_size: int):
        super().__init__()
        size = int(params.get("embedding_size") or 50)
        self.embed = nn.Embedding(vocab_size, size)
        self.embed.weight.requires_grad_(bool(params.get("embeddings_trainable", True)))
        self.dropout = nn.Dropout(float(params.get("dropout") or 0.0))
        self.output_size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the embedding's own forward without a second module call (plain lookup)
        result = nn.functional.embedding(x, self.embed.weight)
        return self.dropout(result) if self.dropout.p else result


class OneHot(nn.Module):
    def __init__(self, vocab_size: int):
        super().__init__()
        self.output_size = vocab_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(x, self.output_size).float()


class _SequenceBase(nn.Module):
    def __init__(self, params: Mapping[str, Any], vocab_size: int, default_reduce: str | None):
        super().__init__()
        size = int(params.get("embedding_size") or 256)
        self.embed = nn.Embedding(vocab_size, size, padding_idx=0)
        self.embed.weight.requires_grad_(bool(params.get("embeddings_trainable", True)))
        self.dropout = nn.Dropout(float(params.get("dropout") or 0.0))
        self.reduce = params.get("reduce_output", default_reduce)
        self.embedding_size = size

    def embedded(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden: torch.Tensor = self.embed(ids)
        return (self.dropout(hidden) if self.dropout.p else hidden), ids != 0


class SequenceEmbed(_SequenceBase):
    """Bag of embeddings, reduced (``sum`` by default)."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__(params, vocab_size, "sum")
        self.reducer = SequenceReducer(self.reduce or "concat", self.embedding_size, length)
        self.output_size = self.reducer.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden, mask = self.embedded(ids)
        if self.reduce == "sum":
            # the <PAD> row is zero and stays zero (padding_idx: no gradient, dropout keeps
            # zeros), so the plain sum is the masked sum, without a pass over the mask
            return hidden.sum(dim=1)
        result: torch.Tensor = self.reducer(hidden, mask)
        return result


class ParallelCNN(_SequenceBase):
    """Ludwig's default text encoder.

    Parallel 1-D convolutions (filter sizes 2-5), reduced over time, then an FC stack (default 512
    -> 256).
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__(params, vocab_size, "sum")
        layers = params.get("conv_layers") or [
            {"filter_size": k} for k in (2, 3, 4, 5)[: params.get("num_conv_layers") or 4]
        ]
        filters = int(params.get("num_filters") or 256)
        convs = [
            nn.Conv1d(
                self.embedding_size,
                int(layer.get("num_filters") or filters),
                int(layer.get("filter_size") or params.get("filter_size") or 3),
            )
            for layer in layers
        ]
        self.kernels = [int(c.kernel_size[0]) for c in convs]
        self.convs = nn.ModuleList(convs)
        self.reducer = SequenceReducer(
            self.reduce or "sum", sum(c.out_channels for c in convs), length
        )
        size = self.reducer.output_size
        specs = params.get("fc_layers")
        if specs is None and params.get("num_fc_layers") is None:
            specs = [{"output_size": 512}, {"output_size": 256}]
        self.fc = FCStack(size, fc_layer_specs({**params, "fc_layers": specs}))
        self.output_size = self.fc.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden, mask = self.embedded(ids)
        x = hidden.transpose(1, 2)
        out = torch.cat(
            [
                torch.relu(conv(_same(x, k)))
                for conv, k in zip(self.convs, self.kernels, strict=True)
            ],
            dim=1,
        )
        out = out.transpose(1, 2)
        result: torch.Tensor = self.fc(self.reducer(out, mask))
        return result


def _same(x: torch.Tensor, k: int) -> torch.Tensor:
    """Zero-pad time so that a convolution of width ``k`` keeps the sequence length."""
    return nn.functional.pad(x, ((k - 1) // 2, k // 2))


class RNN(_SequenceBase):
    """Recurrent encoder.

    ``cell_type`` rnn / lstm / gru, ``state_size``, ``num_layers``, ``bidirectional``; reduced at
    the ``last`` real token by default.
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__(params, vocab_size, "last")
        cells = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
        cell = cells[params.get("cell_type") or "rnn"]
        state = int(params.get("state_size") or 256)
        self.rnn = cell(
            self.embedding_size,
            state,
            num_layers=int(params.get("num_layers") or 1),
            batch_first=True,
            bidirectional=bool(params.get("bidirectional")),
            dropout=float(params.get("recurrent_dropout") or 0.0),
        )
        width = state * (2 if params.get("bidirectional") else 1)
        self.reducer = SequenceReducer(self.reduce or "last", width, length)
        self.output_size = self.reducer.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden, mask = self.embedded(ids)
        out, _ = self.rnn(hidden)
        result: torch.Tensor = self.reducer(out, mask)
        return result


class Transformer(_SequenceBase):
    """Transformer encoder with learned positions.

    Parameters: ``num_layers``, ``num_heads``, ``hidden_size``, ``transformer_output_size``;
    ``last`` reduction by default.
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__(params, vocab_size, "last")
        hidden = int(params.get("hidden_size") or 256)
        self.positions = nn.Embedding(length, self.embedding_size)
        self.project = nn.Linear(self.embedding_size, hidden)
        layer = nn.TransformerEncoderLayer(
            hidden,
            int(params.get("num_heads") or 8),
            dim_feedforward=int(params.get("transformer_output_size") or 256),
            dropout=float(params.get("dropout", 0.1) or 0.0),
            batch_first=True,
        )
        self.encoder = nn.TransformerEncoder(
            layer, int(params.get("num_layers") or 1), enable_nested_tensor=False
        )
        self.reducer = SequenceReducer(self.reduce or "last", hidden, length)
        self.output_size = self.reducer.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden, mask = self.embedded(ids)
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.project(hidden + self.positions(pos))
        out = self.encoder(x, src_key_padding_mask=~mask)
        result: torch.Tensor = self.reducer(out, mask)
        return result


class SetEmbed(nn.Module):
    """Sum of the embeddings of the set's items (bag: weighted by counts), then FC."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int, weighted: bool):
        super().__init__()
        size = int(params.get("embedding_size") or 50)
        self.embed = nn.EmbeddingBag(vocab_size, size, mode="sum", padding_idx=0)
        self.weighted = weighted
        self.dropout = nn.Dropout(float(params.get("dropout") or 0.0))
        self.fc = FCStack(size, fc_layer_specs(params, default_size=10))
        self.output_size = self.fc.output_size

    def forward(self, ids: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        weights = counts if self.weighted else (ids != 0).float()
        result: torch.Tensor = self.fc(self.dropout(self.embed(ids, per_sample_weights=weights)))
        return result


class DateEmbed(nn.Module):
    """Embeddings of month, day, weekday, day of year, hour, minute, second.

    The year and the second of the day through a linear layer; then FC.
    """

    _SIZES = (13, 32, 7, 367, 24, 60, 60)  # month, day, weekday, yearday, hour, minute, second

    def __init__(self, params: Mapping[str, Any], meta: Mapping[str, Any]):
        super().__init__()
        size = int(params.get("embedding_size") or 10)
        self.parts = nn.ModuleList(nn.Embedding(n, size) for n in self._SIZES)
        self.year = nn.Linear(1, size)
        self.daysec = nn.Linear(1, size)
        self.min_year = float(meta.get("min_year", 1970))
        self.span = float(max(1, meta.get("max_year", 1971) - self.min_year))
        self.fc = FCStack(size * 9, fc_layer_specs(params, default_size=10))
        self.output_size = self.fc.output_size

    def forward(self, parts: torch.Tensor) -> torch.Tensor:
        year = (parts[:, :1].float() - self.min_year) / self.span
        daysec = parts[:, 8:9].float() / 86400.0
        embedded = [emb(parts[:, i + 1]) for i, emb in enumerate(self.parts)]
        result: torch.Tensor = self.fc(
            torch.cat([self.year(year), *embedded, self.daysec(daysec)], dim=1)
        )
        return result


#: feature type -> the encoders the built-in engine runs for it
ENCODERS = {
    "number": ("passthrough", "dense"),
    "binary": ("passthrough", "dense"),
    "category": ("dense", "onehot", "passthrough"),
    "text": ("embed", "parallel_cnn", "rnn", "transformer"),
    "sequence": ("embed", "parallel_cnn", "rnn", "transformer"),
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
        length = int(meta["max_sequence_length"])
        if name == "embed":
            return SequenceEmbed(params, vocab, length)
        if name == "parallel_cnn":
            return ParallelCNN(params, vocab, length)
        return RNN(params, vocab, length) if name == "rnn" else Transformer(params, vocab, length)
    if kind in ("set", "bag"):
        return SetEmbed(params, vocab, weighted=kind == "bag")
    return DateEmbed(params, meta)
