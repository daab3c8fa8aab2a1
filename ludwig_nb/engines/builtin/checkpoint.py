"""Checkpoints in ``<run dir>/checkpoints/``: ``latest.ckpt`` and ``best.ckpt``.

A checkpoint holds everything needed to continue: model, optimizer, GradScaler and
learning-rate state, the step and epoch, torch RNG state, early-stopping state, the
statistics so far, the batch size and the preprocessing metadata (as JSON text). Files
are written to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from ludwig_nb.engines.errors import CheckpointError
from ludwig_nb.store.rundir import write_atomic

__all__ = [
    "BEST",
    "CHECKPOINTS_DIR",
    "LATEST",
    "REQUIRED_KEYS",
    "check_resume",
    "load_checkpoint",
    "save_checkpoint",
    "unreadable_torch_file",
]

CHECKPOINTS_DIR = "checkpoints"
LATEST = "latest.ckpt"
BEST = "best.ckpt"


def save_checkpoint(path: Path, state: dict[str, Any]) -> Path:
    """Write ``state`` atomically to ``path`` (bytes on disk once it returns)."""
    return write_atomic(path, lambda handle: torch.save(state, handle))


#: what ``Training._state`` (trainer.py) writes and a resume reads
REQUIRED_KEYS = (
    "step",
    "last_step",
    "batch_size",
    "model",
    "optimizer",
    "lr",
    "rng",
    "best",
    "statistics",
    "metadata",
)


def load_checkpoint(path: Path, *, mmap: bool = False) -> dict[str, Any]:
    """Read a checkpoint onto the CPU (``mmap``: map the tensors, read nothing yet).

    Raises ``FileNotFoundError`` naming the path, and :class:`CheckpointError` naming it
    for a file that is truncated, garbage or not a checkpoint of this engine.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except Exception as err:  # torch's text is 6 lines about weights_only: say what it means
        raise CheckpointError(
            f"{path}: not a readable checkpoint ({unreadable_torch_file(path)}); "
            "resume from an earlier run directory or start afresh"
        ) from err
    if not isinstance(state, dict) or not all(key in state for key in REQUIRED_KEYS):
        missing = [k for k in REQUIRED_KEYS if not isinstance(state, dict) or k not in state]
        raise CheckpointError(f"{path}: not a ludwig_nb checkpoint (missing {', '.join(missing)})")
    return state


def unreadable_torch_file(path: Path) -> str:
    """Explain in words why ``torch.load`` could not read ``path``.

    Torch's own text, kept on the exception's cause, speaks of ``weights_only`` and zip internals.
    """
    import zipfile

    try:
        size = path.stat().st_size
    except OSError as err:
        return f"unreadable: {err.strerror}"
    if size == 0:
        return "the file is empty"
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as handle:
            head = handle.read(4)
        if head.startswith(b"PK"):
            return f"truncated: {size} bytes, the end of the file is missing"
        return "not a file torch wrote (garbage or another format)"
    return "corrupt, or it holds objects other than tensors and plain values"


def check_resume(run_dir: Path, config: Mapping[str, Any]) -> None:
    """Check that the run's latest checkpoint loads and fits ``config``.

    Runs before the thread starts, on ``<run_dir>/checkpoints/latest.ckpt``: same features, same
    model shapes; and on ``best.ckpt`` when there is one (the resumed run keeps it as its best
    weights): it loads, with the same shapes. Reads the tensors memory-mapped and builds the
    model on torch's "meta" device, so nothing large is allocated.

    Raises ``FileNotFoundError`` / :class:`CheckpointError`, naming the file.
    """
    from ludwig_nb.engines.builtin.model import ECD

    path = Path(run_dir) / CHECKPOINTS_DIR / LATEST
    state = load_checkpoint(path, mmap=True)
    try:
        metadata = json.loads(state["metadata"])
        saved = dict(metadata["features"])
    except (TypeError, ValueError, KeyError) as err:
        raise CheckpointError(f"{path}: its preprocessing metadata is unreadable") from err
    from ludwig_nb.engines.builtin.preprocessing.pipeline import (
        METADATA_VERSION,  # pandas: only here
    )

    version = metadata.get("version")
    if isinstance(version, int) and version < METADATA_VERSION:
        raise CheckpointError(
            f"{path}: written by an earlier ludwig_nb (metadata version {version}), whose "
            "built-in model was not yet Ludwig's network layer for layer; it cannot be resumed: "
            "start the run again"
        )
    _same_features(path, saved, config)
    try:
        with torch.device("meta"):
            module = ECD(config, metadata)
    except Exception as err:
        raise CheckpointError(f"{path}: its metadata does not fit the config ({err})") from err
    _same_shapes(path, module.state_dict(), state["model"])
    best = Path(run_dir) / CHECKPOINTS_DIR / BEST
    if best.is_file():
        _same_shapes(best, module.state_dict(), load_checkpoint(best, mmap=True)["model"])


def _same_features(path: Path, saved: Mapping[str, Any], config: Mapping[str, Any]) -> None:
    wanted = {
        str(f["name"]): (str(f["type"]), role)
        for role, key in (("input", "input_features"), ("output", "output_features"))
        for f in config.get(key) or []
    }
    have = {str(n): (str(m.get("type")), str(m.get("role"))) for n, m in saved.items()}
    if wanted == have:
        return
    added = sorted(set(wanted) - set(have))
    removed = sorted(set(have) - set(wanted))
    changed = sorted(n for n in set(wanted) & set(have) if wanted[n] != have[n])
    parts = [
        f"{label} {', '.join(map(repr, names))}"
        for label, names in (("new", added), ("missing", removed), ("changed type", changed))
        if names
    ]
    raise CheckpointError(
        f"{path} was trained with other features ({'; '.join(parts)}); resume with the "
        "config of that run (its config.yaml) or start a new run"
    )


def _same_shapes(path: Path, expected: Mapping[str, Any], saved: Any) -> None:
    if not isinstance(saved, Mapping):
        raise CheckpointError(f"{path}: holds no model weights")
    missing = sorted(set(expected) - set(saved))
    extra = sorted(set(saved) - set(expected))
    shapes = sorted(
        k
        for k in set(expected) & set(saved)
        if tuple(expected[k].shape) != tuple(getattr(saved[k], "shape", ()))
    )
    if missing or extra or shapes:
        first = (shapes or missing or extra)[0]
        raise CheckpointError(
            f"{path}: its weights do not fit this config ({len(shapes)} of other shape, "
            f"{len(missing)} missing, {len(extra)} unexpected, e.g. {first!r}); resume with "
            "the config of that run (its config.yaml) or start a new run"
        )
