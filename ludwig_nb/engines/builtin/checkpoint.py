"""Checkpoints in ``<run dir>/checkpoints/``: ``latest.ckpt`` and ``best.ckpt``.

A checkpoint holds everything needed to continue: model, optimizer, GradScaler and
learning-rate state, the step and epoch, torch RNG state, early-stopping state, the
statistics so far, the batch size and the preprocessing metadata (as JSON text). Files
are written to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

__all__ = ["BEST", "CHECKPOINTS_DIR", "LATEST", "load_checkpoint", "save_checkpoint"]

CHECKPOINTS_DIR = "checkpoints"
LATEST = "latest.ckpt"
BEST = "best.ckpt"


def save_checkpoint(path: Path, state: dict[str, Any]) -> Path:
    """Write ``state`` atomically to ``path`` (bytes on disk once it returns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(state, handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint onto the CPU; raises ``FileNotFoundError`` naming the path."""
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    return state
