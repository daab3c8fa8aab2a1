"""Building blocks shared by encoders, combiners and decoders, built as Ludwig 0.11 builds them.

Activations, initializers, normalisation layers, Ludwig's ``FCStack`` (fully connected layers
with its defaults, its input normalisation and input dropout) and its embedding matrices (the
size capped at the vocabulary unless forced, uniform(-1, 1) unless an initializer is named).
Each module registers its parameters in Ludwig's order, so that the two models' parameters
line up one by one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "FCStack",
    "activation",
    "embedding_matrix",
    "fc_stack",
    "initialize",
    "norm_layer",
]

_ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "elu": nn.ELU,
    "leakyRelu": nn.LeakyReLU,
    "logSigmoid": nn.LogSigmoid,
    "relu": nn.ReLU,
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
    "softmax": functools.partial(nn.Softmax, dim=-1),
    "gelu": nn.GELU,
    "selu": nn.SELU,
    "softplus": nn.Softplus,
}

#: Ludwig's initializer names -> torch's in-place initialisers (called with their defaults)
INITIALIZERS: dict[str, Callable[..., Any]] = {
    "uniform": nn.init.uniform_,
    "normal": nn.init.normal_,
    "constant": nn.init.constant_,
    "ones": nn.init.ones_,
    "zeros": nn.init.zeros_,
    "eye": nn.init.eye_,
    "dirac": nn.init.dirac_,
    "xavier_uniform": nn.init.xavier_uniform_,
    "xavier_normal": nn.init.xavier_normal_,
    "kaiming_uniform": nn.init.kaiming_uniform_,
    "kaiming_normal": nn.init.kaiming_normal_,
    "orthogonal": nn.init.orthogonal_,
    "sparse": nn.init.sparse_,
    "identity": nn.init.eye_,
}

#: Ludwig's embedding initializer when none is named
EMBEDDING_INITIALIZER = {"type": "uniform", "a": -1.0, "b": 1.0}


def activation(name: str | None) -> nn.Module:
    """The activation module for a Ludwig activation name (``None``/"linear": identity).

    Raises ``ValueError`` for an unknown name (the config layer rejects those first).
    """
    if name in (None, "linear", "none"):
        return nn.Identity()
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}")
    return _ACTIVATIONS[name]()


def initialize(tensor: torch.Tensor, spec: str | Mapping[str, Any] | None) -> None:
    """Initialise ``tensor`` in place as Ludwig's ``get_initializer(spec)`` does.

    ``spec`` is a name (the torch initialiser with its defaults: "uniform" is uniform(0, 1)) or
    ``{type: name, **arguments}``; None leaves the tensor as it is. Raises ``ValueError`` for an
    unknown name.
    """
    if spec is None:
        return
    name, kwargs = (spec, {}) if isinstance(spec, str) else (spec["type"], dict(spec))
    kwargs.pop("type", None)
    if name not in INITIALIZERS:
        raise ValueError(f"unknown initializer {name!r}")
    with torch.no_grad():
        INITIALIZERS[name](tensor, **kwargs)


class BatchNorm1dOrIdentity(nn.BatchNorm1d):
    """Ludwig's batch normalisation: the identity for a batch of one row (torch would raise)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x if x.shape[0] == 1 else super().forward(x)


class GhostBatchNorm(nn.Module):
    """Ludwig's ``ghost`` normalisation: batch normalisation over virtual batches.

    Args:
        num_features: Features of the input.
        momentum: Of the running statistics.
        epsilon: Added to the variance.
        virtual_batch_size: Rows per virtual batch in training (None: the whole batch).
    """

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.05,
        epsilon: float = 1e-3,
        virtual_batch_size: int | None = 128,
    ):
        super().__init__()
        self.virtual_batch_size = virtual_batch_size
        self.bn = nn.BatchNorm1d(num_features, momentum=momentum, eps=epsilon)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.shape[0]
        if self.training and self.virtual_batch_size:
            chunks = x.chunk(int(np.ceil(rows / self.virtual_batch_size)), 0)
            return torch.cat([self.bn(c) if c.shape[0] > 1 else c for c in chunks], 0)
        return self.bn(x) if rows != 1 or not self.training else x


def norm_layer(norm: str, size: int, params: Mapping[str, Any] | None = None) -> nn.Module:
    """Ludwig's ``create_norm_layer`` for rank-2 inputs: ``batch``, ``layer`` or ``ghost``.

    Raises ``ValueError`` for another name.
    """
    kwargs = dict(params or {})
    if norm == "batch":
        return BatchNorm1dOrIdentity(size, **kwargs)
    if norm == "layer":
        return nn.LayerNorm(size, **kwargs)
    if norm == "ghost":
        return GhostBatchNorm(size, **kwargs)
    raise ValueError(f"unknown norm {norm!r}")


class FCLayer(nn.Module):
    """Ludwig's ``FCLayer``: linear -> norm -> activation -> dropout, initialised as configured."""

    def __init__(self, input_size: int, spec: Mapping[str, Any]):
        super().__init__()
        self.output_size = int(spec["output_size"])
        linear = nn.Linear(input_size, self.output_size, bias=bool(spec["use_bias"]))
        initialize(linear.weight, spec["weights_initializer"])
        if linear.bias is not None:
            initialize(linear.bias, spec["bias_initializer"])
        parts: list[nn.Module] = [linear]
        if spec.get("norm") is not None:
            parts.append(norm_layer(spec["norm"], self.output_size, spec.get("norm_params")))
        parts.append(activation(spec.get("activation")))
        if spec.get("dropout"):
            parts.append(nn.Dropout(float(spec["dropout"])))
        self.layers = nn.ModuleList(parts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


_LAYER_DEFAULTS = (
    "output_size",
    "use_bias",
    "weights_initializer",
    "bias_initializer",
    "norm",
    "norm_params",
    "activation",
    "dropout",
)


class FCStack(nn.Module):
    """Ludwig's ``FCStack``.

    A normalisation of the input when ``default norm`` is set, a dropout of the input when
    ``default dropout`` is above 0, then one :class:`FCLayer` per spec (``layers``, else
    ``num_layers`` layers of the defaults); ``residual`` adds a layer's input to its output where
    the sizes match. With no layers it passes its input through (after that input norm and
    dropout).

    Args:
        input_size: Features of the input.
        layers: One mapping per layer (keys as the defaults); None: ``num_layers`` of them.
        num_layers: How many layers when ``layers`` is None.
        defaults: ``output_size``, ``use_bias``, ``weights_initializer``, ``bias_initializer``,
            ``norm``, ``norm_params``, ``activation`` and ``dropout`` of every layer.
        residual: Add each layer's input to its output where the sizes match.
    """

    def __init__(
        self,
        input_size: int,
        layers: Sequence[Mapping[str, Any]] | None,
        num_layers: int,
        defaults: Mapping[str, Any],
        residual: bool = False,
    ):
        super().__init__()
        norm, dropout = defaults.get("norm"), float(defaults.get("dropout") or 0.0)
        self.norm_layer = (
            norm_layer(norm, input_size, defaults.get("norm_params")) if norm else None
        )
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None
        specs = [dict(layer) for layer in layers] if layers is not None else [{}] * num_layers
        self.stack = nn.ModuleList()
        size = input_size
        for spec in specs:
            full = {key: spec.get(key, defaults.get(key)) for key in _LAYER_DEFAULTS}
            layer = FCLayer(size, full)
            self.stack.append(layer)
            size = layer.output_size
        self.residual = residual
        self.output_size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise and drop out the input as configured, then run the layers."""
        if self.norm_layer is not None:
            x = self.norm_layer(x)
        if self.dropout is not None:
            x = self.dropout(x)
        for layer in self.stack:
            out = layer(x)
            x = x + out if self.residual and out.shape == x.shape else out
        return x


def fc_stack(
    input_size: int,
    params: Mapping[str, Any],
    *,
    prefix: str = "",
    num_key: str = "num_fc_layers",
    activation_key: str = "activation",
    dropout_key: str = "dropout",
    default_layers: Sequence[Mapping[str, Any]] | None = None,
    residual: bool = False,
) -> FCStack:
    """The ``FCStack`` a Ludwig config section describes.

    ``fc_layers`` (a list of layer mappings) or ``<num_key>`` layers of the section's defaults:
    ``<prefix>output_size``, ``<prefix>use_bias``, ``<prefix>weights_initializer``,
    ``<prefix>bias_initializer``, ``<prefix>norm``, ``<prefix>norm_params``, ``activation_key``
    and ``dropout_key`` (decoders use the ``fc_`` prefix; some encoders ``fc_activation``).
    ``default_layers`` stand in when the section names neither ``fc_layers`` nor a count.
    """
    layers = params.get("fc_layers")
    count = params.get(num_key)
    if layers is None and count is None and default_layers is not None:
        layers = default_layers
    defaults = {
        "output_size": params.get(f"{prefix}output_size") or 256,
        "use_bias": params.get(f"{prefix}use_bias", True),
        "weights_initializer": params.get(f"{prefix}weights_initializer", "xavier_uniform"),
        "bias_initializer": params.get(f"{prefix}bias_initializer", "zeros"),
        "norm": params.get(f"{prefix}norm"),
        "norm_params": params.get(f"{prefix}norm_params"),
        "activation": params.get(activation_key, "relu"),
        "dropout": params.get(dropout_key) or 0.0,
    }
    return FCStack(input_size, layers, int(count or 0), defaults, residual)


def embedding_matrix(
    vocab_size: int,
    size: int,
    *,
    initializer: str | Mapping[str, Any] | None = None,
    force_size: bool = False,
    trainable: bool = True,
) -> nn.Embedding:
    """Ludwig's ``embedding_matrix``: ``vocab_size`` rows of ``min(vocab_size, size)``.

    The width is the vocabulary's size when that is smaller than ``size``, unless
    ``force_size``; the rows are drawn by ``initializer`` (uniform(-1, 1) when None). Frozen
    unless ``trainable``.
    """
    width = vocab_size if vocab_size < size and not force_size else size
    weight = torch.empty(vocab_size, width)
    initialize(weight, initializer if initializer is not None else EMBEDDING_INITIALIZER)
    # the weight as drawn (no draw of torch's own); frozen unless trainable
    return nn.Embedding(vocab_size, width, _weight=weight, _freeze=not trainable)
