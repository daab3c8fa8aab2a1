"""The inverse of a number feature's normalisation: numpy only (no pandas).

The model maps its outputs back to data space with it, so the engine's training modules
never load pandas for it (a run whose data a second process read never loads pandas at
all: engines/builtin/prefetch.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["denormalize"]


def denormalize(array: np.ndarray, meta: Mapping[str, Any]) -> np.ndarray:
    """Inverse of the normalisation of ``transform_number`` (model space -> data)."""
    method = meta.get("normalization")
    out: np.ndarray = array
    if method == "zscore":
        out = array * float(meta["std"]) + float(meta["mean"])
    elif method == "minmax":
        out = array * (float(meta["max"]) - float(meta["min"])) + float(meta["min"])
    elif method == "iq":
        out = array * float(meta["iqr"]) + float(meta["q2"])
    elif method == "log1p":
        out = np.expm1(array)
    return out
