"""Ludwig's ``mlp_mixer`` image encoder (MLP-Mixer, Tolstikhin et al. 2021), plain torch.

Patches of ``patch_size`` embedded by a strided convolution to ``embed_size``, ``num_layers``
mixer blocks (token mixing MLP of ``token_size``, channel mixing MLP of ``channel_dim``, GELU,
pre-norm, residual), a final layer norm, then the mean over patches (``avg_pool``; without it the
patches are flattened).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

__all__ = ["MLPMixer"]


class _MLP(nn.Module):
    def __init__(self, size: int, hidden: int, dropout: float):
        super().__init__()
        self.linear1 = nn.Linear(size, hidden)
        self.linear2 = nn.Linear(hidden, size)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.dropout2(
            self.linear2(self.dropout1(nn.functional.gelu(self.linear1(x))))
        )
        return result


class _MixerBlock(nn.Module):
    def __init__(self, embed: int, patches: int, token: int, channel: int, dropout: float):
        super().__init__()
        self.mlp1 = _MLP(patches, token, dropout)
        self.mlp2 = _MLP(embed, channel, dropout)
        self.layernorm1 = nn.LayerNorm(embed)
        self.layernorm2 = nn.LayerNorm(embed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mixed = self.mlp1(self.layernorm1(x).transpose(1, 2)).transpose(1, 2) + x
        result: torch.Tensor = self.mlp2(self.layernorm2(mixed)) + mixed
        return result


class MLPMixer(nn.Module):
    """``mlp_mixer``: ``[batch, output_size]`` from ``[batch, C, H, W]`` images.

    Args:
        params: The rendered ``encoder`` section.
        shape: Input ``(channels, height, width)``.

    Raises ``ValueError`` when ``patch_size`` does not divide the image's height and width.
    """

    def __init__(self, params: Mapping[str, Any], shape: tuple[int, int, int]):
        super().__init__()
        patch = int(params.get("patch_size") or 16)
        channels, height, width = shape
        if height % patch or width % patch:
            raise ValueError(
                f"mlp_mixer: patch_size {patch} must divide the image size {height} x {width}; "
                "set encoder.patch_size to a divisor of both"
            )
        embed = int(params.get("embed_size") or 512)
        patches = height * width // patch**2
        dropout = float(params.get("dropout") or 0.0)
        self.patch_conv = nn.Conv2d(channels, embed, patch, stride=patch)
        self.mixer_blocks = nn.Sequential(
            *(
                _MixerBlock(
                    embed,
                    patches,
                    int(params.get("token_size") or 2048),
                    int(params.get("channel_dim") or 256),
                    dropout,
                )
                for _ in range(int(params.get("num_layers") or 8))
            )
        )
        self.layer_norm = nn.LayerNorm(embed)
        self.avg_pool = bool(params.get("avg_pool", True))
        self.output_size = embed if self.avg_pool else embed * patches

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``[B, output_size]`` of ``[B, C, H, W]`` images."""
        hidden: torch.Tensor = self.patch_conv(images).flatten(2).transpose(1, 2)
        hidden = self.layer_norm(self.mixer_blocks(hidden))
        return hidden.mean(dim=1) if self.avg_pool else hidden.flatten(1)
