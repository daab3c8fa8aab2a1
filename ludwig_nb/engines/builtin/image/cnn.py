"""Ludwig's default image encoder, ``stacked_cnn``: a stack of 2-D convolutions, then FC layers.

Each conv layer is convolution -> norm (``batch`` or ``layer``) -> activation -> dropout -> pool,
with Ludwig's defaults and quirks: no ``conv_layers`` and no ``num_conv_layers`` means two layers
of 32 and 64 channels; ``num_conv_layers: n`` means n layers of ``out_channels``; a pool stride
left out is the pool size. The flattened maps go through ``num_fc_layers`` x ``output_size`` FC
layers (``fc_*`` keys).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.layers import FCStack, activation

__all__ = [
    "Conv2DLayer",
    "Stacked2DCNN",
    "conv_layer_specs",
    "conv_output_size",
    "image_fc_stack",
    "pair",
]

_LAYER_KEYS = (
    "out_channels",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "groups",
    "use_bias",
    "padding_mode",
    "norm",
    "norm_params",
    "activation",
    "dropout",
    "pool_function",
    "pool_kernel_size",
    "pool_stride",
    "pool_padding",
    "pool_dilation",
)
_AVERAGE = {"average", "avg", "mean"}


def pair(value: Any) -> tuple[int, int]:
    """An int or a pair of ints as a pair."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return int(value[0]), int(value[1])
    return int(value), int(value)


def conv_output_size(
    size: tuple[int, int], kernel: Any, stride: Any, padding: Any, dilation: Any
) -> tuple[int, int]:
    """Height and width after a convolution or a pool (Ludwig's ``get_img_output_shape``)."""
    if padding == "same":
        return size
    pad = (0, 0) if padding == "valid" else pair(padding)
    k, s, d = pair(kernel), pair(stride), pair(dilation)
    return tuple(  # type: ignore[return-value]
        (size[i] + 2 * pad[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)
    )


class Conv2DLayer(nn.Module):
    """Convolution -> norm -> activation -> dropout -> pool (Ludwig's ``Conv2DLayer``).

    Args:
        size: Input ``(height, width)``.
        in_channels: Input channels.
        spec: One layer's keys (:data:`_LAYER_KEYS`), defaults filled in.
    """

    def __init__(self, size: tuple[int, int], in_channels: int, spec: Mapping[str, Any]):
        super().__init__()
        out = int(spec["out_channels"])
        padding = spec["padding"]
        conv = nn.Conv2d(
            in_channels,
            out,
            kernel_size=spec["kernel_size"],
            stride=spec["stride"],
            padding=padding if isinstance(padding, str) else pair(padding),
            dilation=spec["dilation"],
            groups=int(spec["groups"]),
            bias=bool(spec["use_bias"]),
            padding_mode=spec["padding_mode"],
        )
        size = conv_output_size(
            size, spec["kernel_size"], spec["stride"], padding, spec["dilation"]
        )
        layers: list[nn.Module] = [conv, *_norm(spec, out, size), activation(spec["activation"])]
        if spec["dropout"]:
            layers.append(nn.Dropout(float(spec["dropout"])))
        if spec["pool_kernel_size"] is not None:
            layers.append(_pool(spec))
            size = conv_output_size(
                size,
                spec["pool_kernel_size"],
                spec["pool_stride"] or spec["pool_kernel_size"],
                spec["pool_padding"],
                spec["pool_dilation"],
            )
        self.layers = nn.Sequential(*layers)
        self.output_shape = (out, *size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, out, H', W']`` maps of ``[B, in, H, W]``."""
        result: torch.Tensor = self.layers(x)
        return result


def _norm(spec: Mapping[str, Any], channels: int, size: tuple[int, int]) -> list[nn.Module]:
    params = dict(spec.get("norm_params") or {})
    if spec.get("norm") == "batch":
        return [nn.BatchNorm2d(channels, **params)]
    if spec.get("norm") == "layer":
        return [nn.LayerNorm(list(size), **params)]
    return []


def _pool(spec: Mapping[str, Any]) -> nn.Module:
    kernel = spec["pool_kernel_size"]
    stride = spec["pool_stride"] or kernel
    if spec["pool_function"] in _AVERAGE:
        return nn.AvgPool2d(kernel, stride=stride, padding=spec["pool_padding"])
    return nn.MaxPool2d(
        kernel, stride=stride, padding=spec["pool_padding"], dilation=spec["pool_dilation"]
    )


def conv_layer_specs(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every conv layer's keys, Ludwig's defaults filled in (see the module text)."""
    defaults = {
        "out_channels": params.get("out_channels", 32),
        "kernel_size": params.get("kernel_size", 3),
        "stride": params.get("stride", 1),
        "padding": params.get("padding", "valid"),
        "dilation": params.get("dilation", 1),
        "groups": params.get("groups", 1),
        "use_bias": params.get("conv_use_bias", True),
        "padding_mode": params.get("padding_mode", "zeros"),
        "norm": params.get("conv_norm"),
        "norm_params": params.get("conv_norm_params"),
        "activation": params.get("conv_activation", "relu"),
        "dropout": params.get("conv_dropout") or 0.0,
        "pool_function": params.get("pool_function", "max"),
        "pool_kernel_size": params.get("pool_kernel_size", 2),
        "pool_stride": params.get("pool_stride") or params.get("pool_kernel_size", 2),
        "pool_padding": params.get("pool_padding", 0),
        "pool_dilation": params.get("pool_dilation", 1),
    }
    layers = params.get("conv_layers")
    if layers is None:
        count = params.get("num_conv_layers")
        layers = (
            [{"out_channels": 32}, {"out_channels": 64}] if count is None else [{}] * int(count)
        )
    return [
        {**defaults, **{k: v for k, v in layer.items() if k in _LAYER_KEYS}} for layer in layers
    ]


def image_fc_stack(input_size: int, params: Mapping[str, Any], prefix: str) -> FCStack:
    """An image encoder's FC layers, as Ludwig's image encoders build their ``FCStack``.

    ``fc_layers`` or ``num_fc_layers`` (default 1) layers of ``output_size`` (default 128),
    with ``{prefix}use_bias``, ``{prefix}weights_initializer`` (default xavier uniform),
    ``{prefix}bias_initializer`` (default zeros), ``{prefix}norm``, ``{prefix}norm_params``,
    ``{prefix}activation`` (default relu) and ``{prefix}dropout``.
    """
    count = params.get("num_fc_layers")
    defaults = {
        "output_size": params.get("output_size") or 128,
        "use_bias": params.get(f"{prefix}use_bias", True),
        "weights_initializer": params.get(f"{prefix}weights_initializer") or "xavier_uniform",
        "bias_initializer": params.get(f"{prefix}bias_initializer") or "zeros",
        "norm": params.get(f"{prefix}norm"),
        "norm_params": params.get(f"{prefix}norm_params"),
        "activation": params.get(f"{prefix}activation", "relu"),
        "dropout": params.get(f"{prefix}dropout") or 0.0,
    }
    layers = params.get("fc_layers")
    return FCStack(input_size, layers, 1 if count is None else int(count), defaults)


class Stacked2DCNN(nn.Module):
    """``stacked_cnn``: conv layers, flattened, FC layers; ``[batch, output_size]``.

    Args:
        params: The rendered ``encoder`` section.
        shape: Input ``(channels, height, width)``.

    Raises ``ValueError`` when the layers shrink the image to nothing.
    """

    def __init__(self, params: Mapping[str, Any], shape: tuple[int, int, int]):
        super().__init__()
        channels, size = shape[0], (shape[1], shape[2])
        layers: list[nn.Module] = []
        for spec in conv_layer_specs(params):
            layer = Conv2DLayer(size, channels, spec)
            channels, size = layer.output_shape[0], layer.output_shape[1:]
            if min(size) <= 0:
                raise ValueError(
                    f"stacked_cnn: {len(layers) + 1} conv layers shrink {shape[1]} x {shape[2]} "
                    "images to nothing; use fewer layers, smaller pools or larger images"
                )
            layers.append(layer)
        self.conv = nn.Sequential(*layers)
        flat = channels * size[0] * size[1]
        self.fc = image_fc_stack(flat, params, "fc_")
        self.output_size = self.fc.output_size

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``[B, output_size]`` of ``[B, C, H, W]`` images."""
        result: torch.Tensor = self.fc(self.conv(images).flatten(1))
        return result
