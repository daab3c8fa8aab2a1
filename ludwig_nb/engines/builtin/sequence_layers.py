"""Sequence building blocks as Ludwig 0.11 builds them: reduction, transformer, convolutions.

Ludwig reduces a sequence over all its positions, padding included (the ``<PAD>`` embedding
is a trained row like any other), and its ``last`` is the last position whose vector is not
all zeros; its transformer block is post-norm self-attention with no padding mask and dropout
on the attention output and on the feed-forward output. These follow it exactly, so that a
config builds the same network in both engines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from ludwig_nb.engines.builtin.layers import activation
from ludwig_nb.engines.builtin.seed_stream import probe

__all__ = ["ParallelConv1D", "SequenceReducer", "TransformerStack", "reduce_sequence"]


def _last(hidden: torch.Tensor) -> torch.Tensor:
    """Ludwig's ``ReduceLast``: the vector at the last position that is not all zeros."""
    used = torch.sign(torch.amax(torch.abs(hidden), dim=2))
    last = (used.sum(dim=1).long() - 1).clamp(min=0)
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]


def reduce_sequence(hidden: torch.Tensor, mode: str | None) -> torch.Tensor:
    """Reduce ``[batch, time, dim]`` over every position as Ludwig does.

    ``sum``, ``mean``/``avg``, ``max``, ``last``, ``concat`` (flatten to ``[batch, time * dim]``);
    ``None``/``none`` returns ``hidden`` unchanged. Raises ``ValueError`` for another mode.
    """
    if mode == "sum":
        return hidden.sum(dim=1)
    if mode in ("mean", "avg"):
        return hidden.mean(dim=1)
    if mode == "max":
        return hidden.amax(dim=1)
    if mode == "last":
        return _last(hidden)
    if mode == "concat":
        return hidden.reshape(hidden.shape[0], -1)
    if mode in (None, "none", "None"):
        return hidden
    raise ValueError(f"unknown reduce_output {mode!r}")


class FeedForwardAttention(nn.Module):
    """Ludwig's attention reducer: ``tanh(W1 h) -> w2`` scores, softmax over every position."""

    def __init__(self, input_size: int, hidden_size: int = 256):
        super().__init__()
        self.fc_layer1 = nn.Linear(input_size, hidden_size)
        self.fc_layer1_activation = nn.Tanh()
        self.fc_layer2 = nn.Linear(hidden_size, 1, bias=False)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        scores = self.fc_layer2(self.fc_layer1_activation(self.fc_layer1(hidden)))
        return torch.sum(F.softmax(scores, dim=1) * hidden, dim=1)


class SequenceReducer(nn.Module):
    """Ludwig's ``SequenceReducer``: ``[batch, time, dim]`` -> ``[batch, output_size]``.

    Args:
        mode: sum, mean/avg, max, last, concat, attention; None/none keeps the sequence (then
            ``output_size`` is ``length * dim``, as the flattened sequence a combiner reads).
        length: Positions in the sequence.
        dim: Size of each position's vector.
    """

    def __init__(self, mode: str | None, length: int, dim: int):
        super().__init__()
        self.mode = mode
        flat = mode in ("concat", None, "none", "None")
        self.output_size = dim * length if flat else dim
        self.attention = FeedForwardAttention(dim) if mode == "attention" else None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """Reduce ``[batch, time, dim]`` to ``[batch, output_size]``."""
        if self.attention is not None:
            result: torch.Tensor = self.attention(hidden)
            return result
        if self.mode in (None, "none", "None"):
            return hidden.reshape(hidden.shape[0], -1)
        return reduce_sequence(hidden, self.mode)


class MultiHeadSelfAttention(nn.Module):
    """Ludwig's self-attention: query, key, value and output projections; no mask, no dropout."""

    def __init__(self, input_size: int, hidden_size: int, num_heads: int = 8):
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(
                f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})"
            )
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.query_dense = nn.Linear(input_size, hidden_size)
        self.key_dense = nn.Linear(input_size, hidden_size)
        self.value_dense = nn.Linear(input_size, hidden_size)
        self.combine_heads = nn.Linear(hidden_size, hidden_size)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.shape[0]
        return x.reshape(rows, -1, self.num_heads, self.hidden_size // self.num_heads).permute(
            0, 2, 1, 3
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (self._heads(d(x)) for d in (self.query_dense, self.key_dense, self.value_dense))
        out = F.scaled_dot_product_attention(q, k, v).permute(0, 2, 1, 3)
        result: torch.Tensor = self.combine_heads(out.reshape(x.shape[0], -1, self.hidden_size))
        return result


class TransformerBlock(nn.Module):
    """Ludwig's post-norm block: ``LN(x + drop(attn(x)))``, then ``LN(h + drop(ff(h)))``."""

    def __init__(
        self, input_size: int, hidden_size: int, num_heads: int, output_size: int, dropout: float
    ):
        super().__init__()
        self.self_attention = MultiHeadSelfAttention(input_size, hidden_size, num_heads)
        self.dropout1 = nn.Dropout(dropout)
        self.layernorm1 = nn.LayerNorm(hidden_size, eps=1e-6)
        self.fully_connected = nn.Sequential(
            nn.Linear(input_size, output_size), nn.ReLU(), nn.Linear(output_size, hidden_size)
        )
        self.dropout2 = nn.Dropout(dropout)
        self.layernorm2 = nn.LayerNorm(hidden_size, eps=1e-6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attended = self.layernorm1(x + self.dropout1(self.self_attention(x)))
        result: torch.Tensor = self.layernorm2(
            attended + self.dropout2(self.fully_connected(attended))
        )
        return result


class TransformerStack(nn.Module):
    """Ludwig's ``TransformerStack``: ``num_layers`` blocks of ``hidden_size``.

    Args:
        input_size: Size of each position's vector (the first block's input).
        hidden_size: The blocks' width.
        num_heads: Attention heads.
        output_size: The feed-forward layer's width (``transformer_output_size``).
        num_layers: Blocks.
        dropout: Of the attention and feed-forward outputs.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 256,
        num_heads: int = 8,
        output_size: int = 256,
        num_layers: int = 1,
        dropout: float = 0.1,
    ):
        super().__init__()
        sizes = [input_size] + [hidden_size] * (num_layers - 1)
        self.layers = nn.ModuleList(
            TransformerBlock(size, hidden_size, num_heads, output_size, dropout) for size in sizes
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the blocks over ``[batch, time, input_size]``."""
        for layer in self.layers:
            x = layer(x)
        return x


def transformer_stack(params: Mapping[str, Any], input_size: int) -> TransformerStack:
    """The ``TransformerStack`` of an encoder's or combiner's config section."""
    return TransformerStack(
        input_size,
        hidden_size=int(params.get("hidden_size") or 256),
        num_heads=int(params.get("num_heads") or 8),
        output_size=int(params.get("transformer_output_size") or 256),
        num_layers=int(params.get("num_layers") or 1),
        dropout=float(params.get("dropout") or 0.0),
    )


_CONV_DEFAULTS = {
    "num_filters": 256,
    "filter_size": 3,
    "strides": 1,
    "padding": "same",
    "dilation_rate": 1,
    "norm": None,
    "norm_params": None,
    "activation": "relu",
    "dropout": 0.0,
    "pool_function": "max",
    "pool_size": None,
    "pool_strides": None,
    "pool_padding": "same",
}


class Conv1DLayer(nn.Module):
    """Ludwig's ``Conv1DLayer`` over ``[batch, time, channels]``.

    Convolution (torch's own initialisation, always a bias) -> norm -> activation -> dropout ->
    pooling.

    Args:
        in_channels: Channels of the input.
        length: Positions of the input (a ``layer`` norm normalises over channels x positions).
        spec: ``num_filters``, ``filter_size``, ``strides``, ``padding``, ``dilation_rate``,
            ``norm``, ``norm_params``, ``activation``, ``dropout``, ``pool_function``,
            ``pool_size``, ``pool_strides``, ``pool_padding``.
    """

    def __init__(self, in_channels: int, length: int, spec: Mapping[str, Any]):
        super().__init__()
        out = int(spec["num_filters"])
        kernel, stride = int(spec["filter_size"]), int(spec["strides"])
        padding, dilation = spec["padding"], int(spec["dilation_rate"])
        # "same" is padded here, as torch pads it (the extra zero of an even width on the
        # right), without torch's warning that it then copies the input
        total = dilation * (kernel - 1)
        self.same = (total // 2, total - total // 2) if padding == "same" else None
        conv_padding = 0 if padding in ("same", "valid") else int(padding)
        conv = nn.Conv1d(in_channels, out, (kernel,), (stride,), conv_padding, (dilation,))
        self.layers = nn.ModuleList([conv])
        self.output_length = _conv_length(length, kernel, stride, padding, dilation)
        params = dict(spec.get("norm_params") or {})
        if spec.get("norm") == "batch":
            self.layers.append(nn.BatchNorm1d(out, **params))
        elif spec.get("norm") == "layer":
            self.layers.append(nn.LayerNorm([out, self.output_length], **params))
        self.layers.append(activation(spec.get("activation")))
        if spec.get("dropout"):
            self.layers.append(nn.Dropout(float(spec["dropout"])))
        pool = spec.get("pool_size")
        if pool is not None:
            pool = int(pool)
            pool_stride = int(spec.get("pool_strides") or pool)
            pad = (pool - 1) // 2 if spec.get("pool_padding") == "same" else 0
            average = spec.get("pool_function") in ("average", "avg", "mean")
            kind = nn.AvgPool1d if average else nn.MaxPool1d
            self.layers.append(kind(kernel_size=pool, stride=pool_stride, padding=pad))
            self.output_length = (self.output_length + 2 * pad - pool) // pool_stride + 1
        self.output_channels = out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.transpose(1, 2)
        if self.same is not None:
            hidden = F.pad(hidden, self.same)
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden.transpose(1, 2)


def _conv_length(length: int, kernel: int, stride: int, padding: Any, dilation: Any) -> int:
    if padding == "same":
        return length
    pad = 0 if padding == "valid" else int(padding)
    return (length + 2 * pad - int(dilation) * (kernel - 1) - 1) // stride + 1


class ParallelConv1D(nn.Module):
    """Ludwig's ``ParallelConv1D``: convolutions side by side, concatenated over channels.

    Args:
        in_channels: Channels of the input.
        length: Positions of the input.
        layers: One mapping per convolution (keys as :class:`Conv1DLayer`'s ``spec``).
        defaults: Values for the keys a layer leaves out.
    """

    def __init__(
        self,
        in_channels: int,
        length: int,
        layers: Sequence[Mapping[str, Any]],
        defaults: Mapping[str, Any],
    ):
        super().__init__()
        full = [
            {k: layer.get(k, defaults.get(k, v)) for k, v in _CONV_DEFAULTS.items()}
            for layer in layers
        ]
        convs = []
        for spec in full:
            convs.append(Conv1DLayer(in_channels, length, spec))
            probe(convs[-1], length, in_channels)  # as Ludwig logs each layer's output shape
        self.parallel_layers = nn.ModuleList(convs)
        self.output_length: int = convs[0].output_length
        self.output_channels: int = sum(conv.output_channels for conv in convs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[batch, time, channels]`` -> every convolution's output side by side."""
        return torch.cat([layer(x) for layer in self.parallel_layers], dim=2)
