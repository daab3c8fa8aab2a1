"""An image input's module: uint8 pixels in, the encoder's ``[batch, output_size]`` out.

:class:`ImageInput` turns a batch of ``B x C x H x W`` uint8 pixels into floats in [0, 1], applies
the feature's augmentation in training mode, standardises with the metadata's per-channel mean and
deviation when there is one, and runs the encoder: so batches travel (and stay resident on a GPU)
as uint8, a quarter of float32's bytes, and all of it runs batched on the device.

Encoders: ``stacked_cnn`` (Ludwig's default), ``_resnet_legacy``, ``mlp_mixer``, ``_vit_legacy``
(from scratch) in plain torch, and torchvision's families when torchvision loads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ludwig_nb.engines.builtin.image.augment import Augmentation

__all__ = [
    "DEFAULT_ENCODER",
    "OWN_ENCODERS",
    "ImageInput",
    "build_image_encoder",
    "own_augmentation",
    "weights_in_checkpoint",
]

DEFAULT_ENCODER = "stacked_cnn"
Builder = Callable[[Mapping[str, Any], tuple[int, int, int]], nn.Module]


def _stacked_cnn(params: Mapping[str, Any], shape: tuple[int, int, int]) -> nn.Module:
    from ludwig_nb.engines.builtin.image.cnn import Stacked2DCNN

    return Stacked2DCNN(params, shape)


def _resnet_legacy(params: Mapping[str, Any], shape: tuple[int, int, int]) -> nn.Module:
    from ludwig_nb.engines.builtin.image.resnet_legacy import LegacyResNet

    return LegacyResNet(params, shape)


def _mlp_mixer(params: Mapping[str, Any], shape: tuple[int, int, int]) -> nn.Module:
    from ludwig_nb.engines.builtin.image.mixer import MLPMixer

    return MLPMixer(params, shape)


def _vit_legacy(params: Mapping[str, Any], shape: tuple[int, int, int]) -> nn.Module:
    from ludwig_nb.engines.builtin.image.vit_legacy import ViTLegacy

    return ViTLegacy(params, shape)


#: Ludwig's own image encoders, in plain torch
OWN_ENCODERS: dict[str, Builder] = {
    "stacked_cnn": _stacked_cnn,
    "_resnet_legacy": _resnet_legacy,
    "mlp_mixer": _mlp_mixer,
    "_vit_legacy": _vit_legacy,
}


class ImageInput(nn.Module):
    """uint8 pixels -> [0, 1] -> augmentation (training only) -> standardisation -> encoder.

    Args:
        encoder: The image encoder (an ``output_size`` attribute, ``[B, C, H, W]`` floats in).
        meta: The feature's preprocessing metadata (``mean`` and ``std`` per channel, or None).
        augmentation: Ludwig's augmentation list (empty: none).
    """

    def __init__(
        self,
        encoder: nn.Module,
        meta: Mapping[str, Any],
        augmentation: list[Mapping[str, Any]] | None = None,
    ):
        super().__init__()
        self.encoder = encoder
        self.output_size = int(vars(encoder)["output_size"])
        self.augmentation = Augmentation(augmentation) if augmentation else None
        self.mean: torch.Tensor | None
        self.std: torch.Tensor | None
        for name in ("mean", "std"):
            values = meta.get(name)
            tensor = None if values is None else torch.tensor(values).view(1, -1, 1, 1)
            self.register_buffer(name, tensor, persistent=False)

    def use_generator(self, generator: torch.Generator | None) -> None:
        """Augment with the run's own random generator."""
        if self.augmentation is not None:
            self.augmentation.use_generator(generator)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """``[batch, output_size]`` from ``[batch, C, H, W]`` uint8 pixels (or floats in [0, 1])."""
        images = pixels.float().div_(255.0) if pixels.dtype == torch.uint8 else pixels.float()
        if self.augmentation is not None and self.training:
            images = self.augmentation(images)
        if self.mean is not None and self.std is not None:
            images = (images - self.mean) / self.std
        result: torch.Tensor = self.encoder(images)
        return result


def build_image_encoder(feature: Mapping[str, Any], meta: Mapping[str, Any]) -> ImageInput:
    """The module of one image input feature, sized from its metadata.

    Raises ``ValueError`` for an encoder the built-in engine does not have or cannot build
    (torchvision absent, ``use_pretrained`` on ``_vit_legacy``, a size the encoder refuses).
    """
    params = dict(feature.get("encoder") or {})
    name = params.get("type") or DEFAULT_ENCODER
    shape = (int(meta["num_channels"]), int(meta["height"]), int(meta["width"]))
    if name == "_vit_legacy" and params.get("use_pretrained", True):
        raise ValueError(
            f"image feature {feature['name']!r}: _vit_legacy's pretrained weights come from the "
            "Hugging Face hub; set use_pretrained: false to train it from scratch"
        )
    if name in OWN_ENCODERS:
        encoder = OWN_ENCODERS[name](params, shape)
    else:
        encoder = _torchvision(feature, params, shape)
    return ImageInput(encoder, meta, list(feature.get("augmentation") or []))


def _torchvision(
    feature: Mapping[str, Any], params: Mapping[str, Any], shape: tuple[int, int, int]
) -> nn.Module:
    from ludwig_nb.engines.builtin.image.torchvision_encoders import (
        FAMILIES,
        TorchvisionEncoder,
        torchvision_problem,
    )

    name = params.get("type")
    if name not in FAMILIES:
        raise ValueError(f"image feature {feature['name']!r}: no {name!r} encoder here")
    problem = torchvision_problem()
    if problem is not None:
        raise ValueError(
            f"image feature {feature['name']!r}: the {name} encoder needs torchvision ({problem})"
        )
    return TorchvisionEncoder(params, shape)


def weights_in_checkpoint(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` as a saved model's: pretrained image encoders marked as saved with the model.

    Ludwig's ``saved_weights_in_checkpoint``: loading the model then builds the encoder without
    fetching its pretrained weights (the model's own replace them). Other configs are unchanged.
    """
    out = dict(config)
    inputs = []
    for feature in config.get("input_features") or []:
        encoder = feature.get("encoder") or {}
        if feature.get("type") == "image" and encoder.get("use_pretrained"):
            marked = {**encoder, "saved_weights_in_checkpoint": True}
            inputs.append({**feature, "encoder": marked})
        else:
            inputs.append(feature)
    out["input_features"] = inputs
    return out


def own_augmentation(module: nn.Module, generator: torch.Generator) -> int:
    """Make every image input under ``module`` augment with ``generator``; returns how many."""
    inputs = [m for m in module.modules() if isinstance(m, ImageInput)]
    for image_input in inputs:
        image_input.use_generator(generator)
    return len(inputs)
