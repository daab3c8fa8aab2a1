"""Errors about saved state (checkpoints, model folders), said in one line naming the file.

Both are ``ValueError`` subclasses, so code that catches bad input (the magics, the CLI)
catches them too; the cause (torch's or json's own text) stays on ``__cause__``.
"""

from __future__ import annotations

__all__ = ["CheckpointError", "ModelLoadError"]


class CheckpointError(ValueError):
    """A checkpoint to resume from is missing, unreadable or does not fit the config."""


class ModelLoadError(ValueError):
    """A saved model's files are missing, unreadable, or do not fit together."""
