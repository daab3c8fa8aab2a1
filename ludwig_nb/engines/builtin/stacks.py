"""Which inputs the model reads as one stacked tensor, and that stacking: numpy, no torch.

The prefetch process (prefetch.py) stacks a split's columns as it transforms them, so this
holds no torch: a process that only reads and preprocesses never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["STACKED", "input_stacks", "stack_columns", "stackable_inputs"]

#: batch key of the stacked passthrough number/binary inputs (no feature name has a NUL)
STACKED = "\x00stacked"


def stackable_inputs(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Input features the model reads as one stacked ``[batch, n]`` tensor.

    Input features that are one column each and pass through unchanged (number and binary with the
    ``passthrough`` encoder, Ludwig's default, not tied): the model reads them as one ``[batch, n]``
    tensor, in input-feature order.
    """
    names = []
    for feature in config["input_features"]:
        encoder = (feature.get("encoder") or {}).get("type") or "passthrough"
        plain = feature["type"] in ("number", "binary") and encoder == "passthrough"
        if plain and not feature.get("tied"):
            names.append(feature["name"])
    return tuple(names)


def input_stacks(config: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """``TensorData``'s ``stacks`` argument for this config."""
    names = stackable_inputs(config)
    return {STACKED: names} if names else {}


def stack_columns(arrays: dict[str, tuple[np.ndarray, ...]], names: list[str]) -> np.ndarray:
    """The named 1-D arrays as the columns of one float32 matrix, popped from ``arrays``."""
    rows = len(arrays[names[0]][0])
    matrix = np.empty((rows, len(names)), dtype=np.float32)
    for column, name in enumerate(names):
        matrix[:, column] = arrays.pop(name)[0]
    return matrix
