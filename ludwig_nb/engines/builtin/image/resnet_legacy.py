"""Ludwig's own ResNet image encoder, ``_resnet_legacy`` (ResNet v2 blocks, plain torch).

As Ludwig 0.11 builds it: a first convolution (``kernel_size``, ``conv_stride``, padded to keep
the size at stride 1), batch norm, ReLU, an optional max pool, then ``resnet_size``'s block
layers (8 and 14: [1, 2, 2]; 18: [2, 2, 2, 2]; 34 and 50: [3, 4, 6, 3]; 101, 152, 200),
bottleneck blocks from 50 up, channels doubling per layer from ``out_channels``, strides
[1, 2, 2, ...]; the maps are averaged over space and go through FC layers. Batch norm takes
``batch_norm_momentum`` and ``batch_norm_epsilon`` as torch's own arguments, as Ludwig passes
them (so its default momentum 0.9 weighs each batch at 0.9).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.image.cnn import conv_output_size, image_fc_stack

__all__ = ["BLOCK_SIZES", "LegacyResNet"]

#: resnet_size -> blocks per block layer (Ludwig's ``resnet_choices``)
BLOCK_SIZES = {
    8: [1, 2, 2],
    14: [1, 2, 2],
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
}

Shape = tuple[int, int, int]  # channels, height, width


def _fixed_conv(shape: Shape, out: int, kernel: int, stride: int) -> tuple[nn.Conv2d, Shape]:
    """Ludwig's ``Conv2DLayerFixedPadding``: "same" at stride 1, else ``(kernel - 1) // 2``."""
    padding: Any = "same" if stride == 1 else (kernel - 1) // 2
    conv = nn.Conv2d(shape[0], out, kernel, stride=stride, padding=padding, bias=False)
    return conv, (out, *conv_output_size(shape[1:], kernel, stride, padding, 1))


class _Block(nn.Module):
    """A basic (two 3x3) or bottleneck (1x1, 3x3, 1x1 with 4x channels) residual block."""

    def __init__(
        self,
        shape: Shape,
        out: int,
        stride: int,
        bottleneck: bool,
        norm: Mapping[str, Any],
        shortcut: nn.Module | None,
    ):
        super().__init__()
        plan = (
            [(out, 1, 1), (out, 3, stride), (4 * out, 1, 1)]
            if bottleneck
            else [
                (out, 3, stride),
                (out, 3, 1),
            ]
        )
        layers: list[nn.Module] = []
        current = shape
        for i, (channels, kernel, step) in enumerate(plan):
            conv, current = _fixed_conv(current, channels, kernel, step)
            layers += [conv, nn.BatchNorm2d(channels, **norm)]
            if i < len(plan) - 1:
                layers.append(nn.ReLU())
        self.body = nn.Sequential(*layers)
        self.output_shape = current
        if shortcut is None and shape != current:  # Ludwig's Conv2DLayer: 1x1 conv, bias, ReLU
            shortcut = nn.Sequential(nn.Conv2d(shape[0], current[0], 1, stride=stride), nn.ReLU())
        self.shortcut = shortcut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output: ReLU of body plus shortcut."""
        shortcut = x if self.shortcut is None else self.shortcut(x)
        return torch.relu(self.body(x) + shortcut)


def _block_layer(
    shape: Shape, out: int, blocks: int, stride: int, bottleneck: bool, norm: Mapping[str, Any]
) -> tuple[nn.Sequential, Shape]:
    projection, _ = _fixed_conv(shape, 4 * out if bottleneck else out, 1, stride)
    first = _Block(shape, out, stride, bottleneck, norm, projection)
    layers, current = [first], first.output_shape
    for _ in range(1, blocks):
        block = _Block(current, out, 1, bottleneck, norm, None)
        layers.append(block)
        current = block.output_shape
    return nn.Sequential(*layers), current


class LegacyResNet(nn.Module):
    """``_resnet_legacy``: ``[batch, output_size]`` from ``[batch, C, H, W]`` images.

    Args:
        params: The rendered ``encoder`` section.
        shape: Input ``(channels, height, width)``.

    Raises ``ValueError`` for a ``resnet_size`` Ludwig does not have.
    """

    def __init__(self, params: Mapping[str, Any], shape: Shape):
        super().__init__()
        size = int(params.get("resnet_size") or 50)
        if size not in BLOCK_SIZES:
            raise ValueError(
                f"_resnet_legacy: no resnet_size {size}; Ludwig's are {sorted(BLOCK_SIZES)}"
            )
        norm: dict[str, Any] = {
            "momentum": float(params.get("batch_norm_momentum", 0.9)),
            "eps": float(params.get("batch_norm_epsilon", 0.001)),
        }
        out = int(params.get("out_channels") or 32)
        conv, current = _fixed_conv(
            shape, out, int(params.get("kernel_size") or 3), int(params.get("conv_stride") or 1)
        )
        layers: list[nn.Module] = [conv, nn.BatchNorm2d(out, **norm), nn.ReLU()]
        pool = params.get("first_pool_kernel_size")
        if pool:
            stride = params.get("first_pool_stride") or pool
            layers.append(nn.MaxPool2d(pool, stride=stride, padding=1))
            current = (current[0], *conv_output_size(current[1:], pool, stride, 1, 1))
        bottleneck = size >= 50
        for i, blocks in enumerate(BLOCK_SIZES[size]):
            layer, current = _block_layer(
                current, out, blocks, 1 if i == 0 else 2, bottleneck, norm
            )
            layers.append(layer)
            out *= 2
        self.body = nn.Sequential(*layers)
        self.fc = image_fc_stack(current[0], params, "")
        self.output_size = self.fc.output_size

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``[B, output_size]`` of ``[B, C, H, W]`` images."""
        result: torch.Tensor = self.fc(self.body(images).mean(dim=(2, 3)))
        return result
