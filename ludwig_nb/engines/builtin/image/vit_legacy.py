"""Ludwig's ``_vit_legacy`` image encoder trained from scratch, in plain torch.

The network of Hugging Face's ``ViTModel`` built from a config (``use_pretrained: false``):
patches of ``patch_size`` embedded to ``hidden_size``, a class token and learned positions,
``num_hidden_layers`` pre-norm layers (``num_attention_heads``, ``intermediate_size``,
``hidden_act``, dropouts), a final layer norm and the pooler (dense + tanh on the class token),
whose output is the encoding, as Ludwig's. The parameters are Hugging Face's, in its order
(separate query, key, value and output projections), so weights move between the two; they start
as Hugging Face's do (normal of ``initializer_range``, the class token and positions truncated
normal). Pretrained weights (``use_pretrained: true``, the default) come from
the Hugging Face hub and are refused by the built-in engine's capabilities before this is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from ludwig_nb.engines.builtin.layers import activation

__all__ = ["ViTLegacy"]


class _Attention(nn.Module):
    """Multi-head self-attention with separate query, key, value and output projections."""

    def __init__(self, hidden: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.dropout = dropout
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, T, hidden]`` attended over all ``T`` positions (no mask)."""
        batch, length, _ = x.shape

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, length, self.heads, -1).transpose(1, 2)

        attended = nn.functional.scaled_dot_product_attention(
            split(self.q_proj(x)),
            split(self.k_proj(x)),
            split(self.v_proj(x)),
            dropout_p=self.dropout if self.training else 0.0,
        )
        result: torch.Tensor = self.o_proj(attended.transpose(1, 2).reshape(batch, length, -1))
        return result


class _Layer(nn.Module):
    """One pre-norm layer, its parameters in Hugging Face's order (attention, norms, MLP)."""

    def __init__(self, params: Mapping[str, Any], hidden: int, eps: float):
        super().__init__()
        self.attention = _Attention(
            hidden,
            int(params.get("num_attention_heads") or 12),
            float(params.get("attention_probs_dropout_prob", 0.1) or 0.0),
        )
        self.layernorm_before = nn.LayerNorm(hidden, eps=eps)
        self.layernorm_after = nn.LayerNorm(hidden, eps=eps)
        size = int(params.get("intermediate_size") or 3072)
        self.mlp = nn.Sequential(
            nn.Linear(hidden, size),
            activation(params.get("hidden_act") or "gelu"),
            nn.Linear(size, hidden),
        )
        self.dropout = nn.Dropout(float(params.get("hidden_dropout_prob", 0.1) or 0.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attention then the MLP, each after its layer norm, each with dropout and residual."""
        x = x + self.dropout(self.attention(self.layernorm_before(x)))
        result: torch.Tensor = x + self.dropout(self.mlp(self.layernorm_after(x)))
        return result


class ViTLegacy(nn.Module):
    """``_vit_legacy`` from scratch: ``[batch, hidden_size]`` from ``[batch, C, H, W]`` images.

    Args:
        params: The rendered ``encoder`` section.
        shape: Input ``(channels, height, width)``.

    Raises ``ValueError`` for images that are not square (as Ludwig) or smaller than a patch.
    """

    def __init__(self, params: Mapping[str, Any], shape: tuple[int, int, int]):
        super().__init__()
        channels, height, width = shape
        patch = int(params.get("patch_size") or 16)
        if height != width or height < patch:
            raise ValueError(
                f"_vit_legacy: images must be square and at least patch_size ({patch}) wide, "
                f"not {height} x {width}; set the image size or encoder.patch_size"
            )
        hidden = int(params.get("hidden_size") or 768)
        heads = int(params.get("num_attention_heads") or 12)
        if hidden % heads:
            raise ValueError(
                f"_vit_legacy: hidden_size {hidden} must be a multiple of num_attention_heads "
                f"{heads}; set one of them so that it is"
            )
        eps = float(params.get("layer_norm_eps") or 1e-12)
        patches = (height // patch) ** 2
        self.patch_embeddings = nn.Conv2d(channels, hidden, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.position_embeddings = nn.Parameter(torch.zeros(1, patches + 1, hidden))
        self.embedding_dropout = nn.Dropout(float(params.get("hidden_dropout_prob", 0.1) or 0.0))
        self.layers = nn.ModuleList(
            _Layer(params, hidden, eps) for _ in range(int(params.get("num_hidden_layers") or 12))
        )
        self.layernorm = nn.LayerNorm(hidden, eps=eps)
        self.pooler = nn.Linear(hidden, hidden)
        self.checkpointing = bool(params.get("gradient_checkpointing"))
        self._initialise(float(params.get("initializer_range") or 0.02))
        if params.get("trainable") is False:
            self.requires_grad_(False)
        self.output_size = hidden

    def _initialise(self, std: float) -> None:
        """Hugging Face's ViT initialisation: normal weights of ``std``, zero biases."""
        for module in self.modules():
            if isinstance(module, nn.Linear | nn.Conv2d):
                nn.init.normal_(module.weight, std=std)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.trunc_normal_(self.position_embeddings, std=std)
        nn.init.trunc_normal_(self.cls_token, std=std)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``[B, hidden_size]`` (the pooler's output) of ``[B, C, H, W]`` images."""
        hidden = self.patch_embeddings(images).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(hidden.shape[0], -1, -1)
        hidden = self.embedding_dropout(torch.cat([cls, hidden], dim=1) + self.position_embeddings)
        for layer in self.layers:
            if self.checkpointing and self.training:
                hidden = checkpoint(layer, hidden, use_reentrant=False)
            else:
                hidden = layer(hidden)
        return torch.tanh(self.pooler(self.layernorm(hidden)[:, 0]))
