"""Hand-written torch loops of the same math as the built-in engine's default models, for
``engine_speed.py``: what a user would write without a framework.

The data are the engine's own preprocessed arrays (so the comparison is the step loop, not
preprocessing), stacked by hand into one tensor per kind: numbers and binaries (one float
matrix), categories (one int64 matrix, one embedding each), token ids (one int64 matrix).
Models: Ludwig's defaults written out, i.e. passthrough numbers/binaries, a 50-wide
embedding per category, text ``parallel_cnn`` (convolutions 2-5 over 256-wide embeddings,
sum over time, FC 512 -> 256), sequence ``embed`` (summed embeddings), concat, a linear
decoder, BCE with logits, Adam, global-norm clipping at 0.5.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["HandData", "HandModel", "hand_eval", "hand_train"]


class HandData:
    """The training split's arrays, one tensor per kind."""

    def __init__(self, config: Mapping[str, Any], arrays: Mapping[str, tuple[np.ndarray, ...]]):
        kinds = {f["name"]: f["type"] for f in config["input_features"]}
        floats = [n for n, k in kinds.items() if k in ("number", "binary")]
        cats = [n for n, k in kinds.items() if k == "category"]
        self.tokens = [n for n, k in kinds.items() if k in ("text", "sequence")]
        self.token_kinds = [kinds[n] for n in self.tokens]
        target = config["output_features"][0]["name"]
        self.x = (
            torch.from_numpy(np.column_stack([arrays[n][0] for n in floats]).astype(np.float32))
            if floats
            else None
        )
        self.c = torch.from_numpy(np.column_stack([arrays[n][0] for n in cats])) if cats else None
        self.t = [torch.from_numpy(arrays[n][0]) for n in self.tokens]
        self.y = torch.from_numpy(arrays[target][0].astype(np.float32))
        self.count = len(self.y)

    def batch(self, index: torch.Tensor) -> tuple[Any, ...]:
        """Rows ``index`` of every tensor (one ``index_select`` each)."""
        x, c, y = (
            None if t is None else t.index_select(0, index) for t in (self.x, self.c, self.y)
        )
        return x, c, [t.index_select(0, index) for t in self.t], y

    def rows(self, start: int, end: int) -> tuple[Any, ...]:
        """Rows ``start:end`` of every tensor (views)."""
        x, c = (None if t is None else t[start:end] for t in (self.x, self.c))
        return x, c, [t[start:end] for t in self.t]


class HandModel(nn.Module):
    def __init__(self, data: HandData, vocabs: Mapping[str, int]):
        super().__init__()
        width = 0 if data.x is None else data.x.shape[1]
        cats = (
            [] if data.c is None else [int(data.c[:, i].max()) + 1 for i in range(data.c.shape[1])]
        )
        self.embeds = nn.ModuleList(nn.Embedding(n, 50) for n in cats)
        width += 50 * len(cats)
        self.texts = nn.ModuleList()
        for name, kind in zip(data.tokens, data.token_kinds, strict=True):
            self.texts.append(_TextCNN(vocabs[name]) if kind == "text" else _Bag(vocabs[name]))
            width += 256
        self.out = nn.Linear(width, 1)

    def forward(self, x: Any, c: Any, t: list[torch.Tensor]) -> torch.Tensor:
        parts = [] if x is None else [x]
        parts += [emb(c[:, i]) for i, emb in enumerate(self.embeds)]
        parts += [enc(ids) for enc, ids in zip(self.texts, t, strict=True)]
        return self.out(torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]).squeeze(-1)


class _Bag(nn.Module):
    def __init__(self, vocab: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, 256, padding_idx=0)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids).sum(dim=1)  # the padding row is zero


class _TextCNN(nn.Module):
    def __init__(self, vocab: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, 256, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(256, 256, k) for k in (2, 3, 4, 5))
        self.fc1, self.fc2 = nn.Linear(1024, 512), nn.Linear(512, 256)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids).transpose(1, 2)
        pads = [((k - 1) // 2, k // 2) for k in (2, 3, 4, 5)]
        h = torch.cat(
            [torch.relu(conv(F.pad(x, pad))) for conv, pad in zip(self.convs, pads, strict=True)],
            dim=1,
        )
        pooled = (h * (ids != 0).unsqueeze(1)).sum(dim=2)
        return torch.relu(self.fc2(torch.relu(self.fc1(pooled))))


def hand_train(
    model: HandModel, data: HandData, batch: int, epochs: int, lr: float = 1e-3
) -> list[float]:
    """Train; returns the wall time of every step (seconds), loss not read per step."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    times = []
    for epoch in range(epochs):
        order = torch.randperm(data.count, generator=torch.Generator().manual_seed(epoch))
        for start in range(0, data.count, batch):
            began = time.perf_counter()
            x, c, t, y = data.batch(order[start : start + batch])
            loss = F.binary_cross_entropy_with_logits(model(x, c, t), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            times.append(time.perf_counter() - began)
    return times


@torch.no_grad()
def hand_eval(model: HandModel, data: HandData, batch: int) -> dict[str, float]:
    """Probabilities of every row in ``batch``-sized slices, then loss, accuracy, ROC AUC."""
    from sklearn.metrics import roc_auc_score

    model.eval()
    logits = []
    for start in range(0, data.count, batch):
        logits.append(model(*data.rows(start, start + batch)))
    raw = torch.cat(logits)
    prob = torch.sigmoid(raw).numpy()
    y = data.y.numpy()
    return {
        "loss": float(F.binary_cross_entropy_with_logits(raw, data.y)),
        "accuracy": float(np.mean((prob >= 0.5) == (y >= 0.5))),
        "roc_auc": float(roc_auc_score(y, prob)),
    }
