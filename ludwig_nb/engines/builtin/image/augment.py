"""Ludwig 0.11's image augmentation, on the device, on training batches only.

The operations (``augmentation`` of an image input): ``random_horizontal_flip``,
``random_vertical_flip``, ``random_rotate`` (``degree``), ``random_blur`` (``kernel_size``),
``random_brightness`` and ``random_contrast`` (``min``, ``max``). Each applies to an image with
probability 1/2, as Ludwig's do; where Ludwig draws that coin (and the angle or factor) once per
batch, here each image draws its own, so that one batch holds both kinds. The batch is
``B x C x H x W`` float in [0, 1]; in evaluation mode (validation, test, predict) nothing changes.
Random numbers come from the run's own generator (:meth:`Augmentation.use_generator`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

__all__ = ["OPERATIONS", "Augmentation"]

Operation = Callable[[torch.Tensor, Mapping[str, Any], "Augmentation"], torch.Tensor]
_GRAY = (0.2989, 0.587, 0.114)


class Augmentation(nn.Module):
    """The augmentation operations of one image input, applied in order.

    Args:
        operations: Ludwig's list (``[{"type": "random_rotate", "degree": 15}, ...]``).

    Raises ``ValueError`` for an operation that is not one of :data:`OPERATIONS`.
    """

    def __init__(self, operations: Sequence[Mapping[str, Any]]):
        super().__init__()
        for op in operations:
            if op.get("type") not in OPERATIONS:
                raise ValueError(f"no augmentation operation {op.get('type')!r} here")
        self.operations = [dict(op) for op in operations]
        self.generator: torch.Generator | None = None

    def use_generator(self, generator: torch.Generator | None) -> None:
        """Draw from ``generator`` (the run's own, on the model's device); None: torch's global."""
        self.generator = generator

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """The augmented batch (a new tensor) in training mode; ``images`` itself otherwise."""
        if not self.training:
            return images
        for op in self.operations:
            images = OPERATIONS[op["type"]](images, op, self)
        return images

    def uniform(self, images: torch.Tensor, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
        """One number per image in ``[low, high)``, shaped ``B x 1 x 1 x 1``."""
        generator = self.generator if _same_device(self.generator, images) else None
        drawn = torch.rand(images.shape[0], device=images.device, generator=generator)
        return (low + (high - low) * drawn).view(-1, 1, 1, 1).to(images.dtype)

    def coin(self, images: torch.Tensor) -> torch.Tensor:
        """True for about half the images (``B x 1 x 1 x 1`` bool)."""
        return self.uniform(images) < 0.5


def _same_device(generator: torch.Generator | None, images: torch.Tensor) -> bool:
    return generator is not None and generator.device.type == images.device.type


def _flip(dim: int) -> Operation:
    def flip(images: torch.Tensor, _: Mapping[str, Any], aug: Augmentation) -> torch.Tensor:
        return torch.where(aug.coin(images), images.flip(dim), images)

    return flip


def _rotate(images: torch.Tensor, op: Mapping[str, Any], aug: Augmentation) -> torch.Tensor:
    """Rotate by an angle in ``[-degree, degree)`` about the centre (nearest pixel, black fill)."""
    degree = float(op.get("degree", 15))
    angle = aug.uniform(images, -degree, degree).view(-1) * (math.pi / 180.0)
    angle = torch.where(aug.coin(images).view(-1), angle, torch.zeros_like(angle))
    height, width = images.shape[-2:]
    cos, sin = torch.cos(angle), torch.sin(angle)
    zero = torch.zeros_like(cos)
    theta = torch.stack(
        [
            torch.stack([cos, -sin * height / width, zero], dim=1),
            torch.stack([sin * width / height, cos, zero], dim=1),
        ],
        dim=1,
    )
    grid = nn.functional.affine_grid(theta, list(images.shape), align_corners=False)
    return nn.functional.grid_sample(
        images, grid, mode="nearest", padding_mode="zeros", align_corners=False
    )


def _blur(images: torch.Tensor, op: Mapping[str, Any], aug: Augmentation) -> torch.Tensor:
    """Gaussian blur of ``kernel_size`` (torchvision's default sigma for that size)."""
    size = int(op.get("kernel_size", 3))
    sigma = 0.3 * ((size - 1) * 0.5 - 1) + 0.8
    steps = torch.arange(size, device=images.device, dtype=images.dtype) - (size - 1) / 2
    kernel = torch.exp(-(steps**2) / (2 * sigma**2))
    kernel = kernel / kernel.sum()
    channels = images.shape[1]
    half = size // 2
    out = nn.functional.pad(images, (half, half, half, half), mode="reflect")
    out = nn.functional.conv2d(
        out, kernel.view(1, 1, 1, -1).repeat(channels, 1, 1, 1), groups=channels
    )
    out = nn.functional.conv2d(
        out, kernel.view(1, 1, -1, 1).repeat(channels, 1, 1, 1), groups=channels
    )
    return torch.where(aug.coin(images), out, images)


def _brightness(images: torch.Tensor, op: Mapping[str, Any], aug: Augmentation) -> torch.Tensor:
    factor = aug.uniform(images, float(op.get("min", 0.5)), float(op.get("max", 2.0)))
    return torch.where(aug.coin(images), (images * factor).clamp(0.0, 1.0), images)


def _contrast(images: torch.Tensor, op: Mapping[str, Any], aug: Augmentation) -> torch.Tensor:
    """Blend each image with its mean gray level (torchvision's adjust_contrast)."""
    factor = aug.uniform(images, float(op.get("min", 0.5)), float(op.get("max", 2.0)))
    if images.shape[1] == 3:
        weights = torch.tensor(_GRAY, device=images.device, dtype=images.dtype).view(1, 3, 1, 1)
        gray = (images * weights).sum(dim=1, keepdim=True)
    else:
        gray = images
    mean = gray.mean(dim=(1, 2, 3), keepdim=True)
    adjusted = (factor * images + (1.0 - factor) * mean).clamp(0.0, 1.0)
    return torch.where(aug.coin(images), adjusted, images)


#: Ludwig's operation name -> the function applying it
OPERATIONS: dict[str, Operation] = {
    "random_horizontal_flip": _flip(-1),
    "random_vertical_flip": _flip(-2),
    "random_rotate": _rotate,
    "random_blur": _blur,
    "random_brightness": _brightness,
    "random_contrast": _contrast,
}
