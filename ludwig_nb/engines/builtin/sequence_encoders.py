"""Text and sequence encoders, built as Ludwig 0.11 builds them.

``embed``, ``parallel_cnn``, ``rnn`` and ``transformer``. Each embeds the token ids (the
embedding's width capped at the vocabulary's size, initialised by the encoder's
``weights_initializer`` as Ludwig passes it on), runs its layers over every position (``<PAD>``
included, as in Ludwig), reduces the sequence (``reduce_output``) and runs an FC stack over the
result (none with ``reduce_output: null``). The input is ``[batch, length]``
token ids; the output ``[batch, output_size]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import embedding_matrix, fc_stack
from ludwig_nb.engines.builtin.seed_stream import probe
from ludwig_nb.engines.builtin.sequence_layers import (
    ParallelConv1D,
    SequenceReducer,
    transformer_stack,
)

__all__ = ["SEQUENCE_ENCODERS", "build_sequence_encoder"]

SEQUENCE_ENCODERS = ("embed", "parallel_cnn", "rnn", "transformer")


class EmbedSequence(nn.Module):
    """Ludwig's ``EmbedSequence``: token embeddings, then dropout."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int, initializer: Any):
        super().__init__()
        self.embeddings = embedding_matrix(
            vocab_size,
            int(params.get("embedding_size") or 256),
            initializer=initializer,
            trainable=bool(params.get("embeddings_trainable", True)),
        )
        dropout = float(params.get("dropout") or 0.0)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None
        self.output_size = self.embeddings.embedding_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        embedded = nn.functional.embedding(ids, self.embeddings.weight)
        return self.dropout(embedded) if self.dropout is not None else embedded


class _Reduced(nn.Module):
    """The reduction and FC stack every sequence encoder ends with (no FC stack unreduced)."""

    reduce_sequence: SequenceReducer
    fc_stack: nn.Module | None

    def _finish(self, params: Mapping[str, Any], length: int, dim: int, **fc: Any) -> None:
        mode = params.get("reduce_output")
        self.reduce_sequence = SequenceReducer(mode, length, dim)
        size = self.reduce_sequence.output_size
        self.fc_stack = fc_stack(size, params, **fc) if mode is not None else None
        self.output_size = self.fc_stack.output_size if self.fc_stack is not None else size

    def _reduce(self, hidden: torch.Tensor) -> torch.Tensor:
        reduced: torch.Tensor = self.reduce_sequence(hidden)
        if self.fc_stack is None:
            return reduced
        result: torch.Tensor = self.fc_stack(reduced)
        return result


class SequenceEmbed(_Reduced):
    """Ludwig's ``embed`` sequence encoder: embeddings reduced (``sum`` by default)."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__()
        self.embed_sequence = EmbedSequence(
            params, vocab_size, params.get("weights_initializer", "uniform")
        )
        mode = params.get("reduce_output", "sum")
        self.reduce_sequence = SequenceReducer(mode, length, self.embed_sequence.output_size)
        self.fc_stack = None
        self.output_size = self.reduce_sequence.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.reduce_sequence(self.embed_sequence(ids))
        return result


_DEFAULT_CONV_LAYERS = (
    {"filter_size": 2},
    {"filter_size": 3},
    {"filter_size": 4},
    {"filter_size": 5},
)
_DEFAULT_CNN_FC = ({"output_size": 512}, {"output_size": 256})


class ParallelCNN(_Reduced):
    """Ludwig's ``parallel_cnn`` (the default text encoder).

    Convolutions of widths 2-5 side by side (256 filters each, ``same`` padding), reduced over
    the sequence (``sum``), then an FC stack (512 -> 256 unless the config names layers).
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__()
        init = params.get("weights_initializer", "xavier_uniform")
        self.embed_sequence = EmbedSequence(params, vocab_size, init)
        layers = params.get("conv_layers")
        count = params.get("num_conv_layers")
        if layers is None:
            layers = [{}] * int(count) if count is not None else list(_DEFAULT_CONV_LAYERS)
        defaults = {
            "num_filters": params.get("num_filters") or 256,
            "filter_size": params.get("filter_size") or 3,
            "norm": params.get("norm"),
            "norm_params": params.get("norm_params"),
            "activation": params.get("activation", "relu"),
            "dropout": params.get("dropout") or 0.0,
            "pool_function": params.get("pool_function", "max"),
            "pool_size": params.get("pool_size"),
            "pool_padding": "same",
        }
        self.parallel_conv1d = ParallelConv1D(
            self.embed_sequence.output_size, length, layers, defaults
        )
        conv = self.parallel_conv1d
        probe(conv, length, self.embed_sequence.output_size)  # Ludwig's size for its reducer
        self._finish(
            {"reduce_output": "sum", **params},
            conv.output_length,
            conv.output_channels,
            default_layers=_DEFAULT_CNN_FC,
        )

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self._reduce(self.parallel_conv1d(self.embed_sequence(ids)))


class StackedRNN(_Reduced):
    """Ludwig's ``rnn`` encoder: torch's RNN / LSTM / GRU (its own initialisation).

    ``cell_type``, ``state_size``, ``num_layers``, ``bidirectional``, ``recurrent_dropout``;
    reduced at the ``last`` position by default; then an FC stack (none by default).
    """

    _CELLS: Mapping[str, Callable[..., nn.RNNBase]] = {
        "rnn": nn.RNN,
        "lstm": nn.LSTM,
        "gru": nn.GRU,
    }

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__()
        init = params.get("weights_initializer", "xavier_uniform")
        self.embed_sequence = EmbedSequence(params, vocab_size, init)
        state = int(params.get("state_size") or 256)
        bidirectional = bool(params.get("bidirectional"))
        cell = self._CELLS[params.get("cell_type") or "rnn"]
        self.recurrent_stack = cell(
            self.embed_sequence.output_size,
            state,
            num_layers=int(params.get("num_layers") or 1),
            bias=bool(params.get("use_bias", True)),
            dropout=float(params.get("recurrent_dropout") or 0.0),
            bidirectional=bidirectional,
            batch_first=True,
        )
        self._finish(
            {"reduce_output": "last", **params},
            length,
            state * (2 if bidirectional else 1),
            activation_key="fc_activation",
            dropout_key="fc_dropout",
        )

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.recurrent_stack(self.embed_sequence(ids))
        return self._reduce(hidden)


class TokenAndPositionEmbedding(nn.Module):
    """Token embeddings plus learned position embeddings (torch's N(0, 1) initialisation)."""

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int, init: Any):
        super().__init__()
        self.token_embed = EmbedSequence(params, vocab_size, init)
        self.position_embed = nn.Embedding(length, self.token_embed.output_size)
        self.positions: torch.Tensor
        self.register_buffer("positions", torch.arange(length), persistent=False)
        self.output_size = self.token_embed.output_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = self.positions[: ids.shape[1]]
        result: torch.Tensor = self.token_embed(ids) + self.position_embed(positions)
        return result


class StackedTransformer(_Reduced):
    """Ludwig's ``transformer`` encoder.

    Token and position embeddings, projected to ``hidden_size`` when the embedding is narrower
    (a capped vocabulary), Ludwig's transformer blocks, the ``last`` position by default, then
    an FC stack (none by default).
    """

    def __init__(self, params: Mapping[str, Any], vocab_size: int, length: int):
        super().__init__()
        init = params.get("weights_initializer", "xavier_uniform")
        self.embed_sequence = TokenAndPositionEmbedding(params, vocab_size, length, init)
        hidden = int(params.get("hidden_size") or 256)
        width = self.embed_sequence.output_size
        self.project_to_hidden_size = nn.Linear(width, hidden) if width != hidden else None
        self.transformer_stack = transformer_stack({"dropout": 0.1, **params}, hidden)
        self._finish(
            {"reduce_output": "last", **params},
            length,
            hidden,
            activation_key="fc_activation",
            dropout_key="fc_dropout",
        )

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embed_sequence(ids)
        if self.project_to_hidden_size is not None:
            hidden = self.project_to_hidden_size(hidden)
        return self._reduce(self.transformer_stack(hidden))


def build_sequence_encoder(
    name: str, params: Mapping[str, Any], vocab_size: int, length: int
) -> nn.Module:
    """The ``name`` encoder for a text or sequence input of ``length`` tokens.

    Raises ``ValueError`` for a name not in :data:`SEQUENCE_ENCODERS`.
    """
    if name == "embed":
        return SequenceEmbed(params, vocab_size, length)
    if name == "parallel_cnn":
        return ParallelCNN(params, vocab_size, length)
    if name == "rnn":
        return StackedRNN(params, vocab_size, length)
    if name == "transformer":
        return StackedTransformer(params, vocab_size, length)
    raise ValueError(f"no {name!r} sequence encoder here")
