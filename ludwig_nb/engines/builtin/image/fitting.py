"""An image feature's preprocessing metadata, fitted on every split's rows (Ludwig 0.11's rules).

* **size**: ``height`` / ``width`` when given (``requires_equal_dimensions``: the smaller of the
  two for both); else, with ``infer_image_dimensions``, the rounded mean size of the first
  ``infer_image_sample_size`` images, at most ``infer_image_max_height`` x ``..._width``; else the
  first image's size.
* **channels**: ``num_channels`` when given; else, with ``infer_image_num_channels`` or
  ``infer_image_dimensions``, the channel count of most of the sample (1, 2 or 4 when over half
  have it, else 3); else the first image's.
* **normalisation**: pixels / 255; ``standardize_image: imagenet1k`` then subtracts ImageNet's
  per-channel mean and divides by its standard deviation, for 3 channels only (with any other
  count it is turned off, with a warning, as Ludwig does). A torchvision encoder imposes its
  weights' preset instead: 3 channels, its crop size, its resize and its mean and deviation.

Only image headers are read here (no pixel is decoded).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.image.cells import is_missing_cell
from ludwig_nb.engines.builtin.image.pixels import UnreadableImage, open_image

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "channels_of",
    "fit_image",
    "infer_channels",
    "infer_size",
    "standardization",
]

log = logging.getLogger(__name__)

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
_GRAY_DEFAULT = 128.0  # Ludwig's fill for an image it cannot read


def channels_of(opened: Any) -> int:
    """Channels of an opened image (a palette image decodes as RGB, or RGBA with transparency)."""
    if isinstance(opened, np.ndarray):
        return 1 if opened.ndim == 2 else int(opened.shape[2])
    if opened.mode == "P":
        return 4 if "transparency" in opened.info else 3
    return len(opened.getbands())


def _size_of(opened: Any) -> tuple[int, int]:
    if isinstance(opened, np.ndarray):
        return int(opened.shape[0]), int(opened.shape[1])
    width, height = opened.size
    return int(height), int(width)


def _sample(cells: Sequence[Any], count: int) -> list[tuple[int, int, int]]:
    """``(height, width, channels)`` of the first ``count`` readable cells (headers only)."""
    out: list[tuple[int, int, int]] = []
    for cell in cells:
        if len(out) >= count:
            break
        try:
            opened = open_image(cell)
        except UnreadableImage:
            continue
        out.append((*_size_of(opened), channels_of(opened)))
        if not isinstance(opened, np.ndarray):
            opened.close()
    return out


def infer_size(sample: Sequence[tuple[int, int, int]], prep: Mapping[str, Any]) -> tuple[int, int]:
    """``(height, width)`` from the preprocessing keys and the sample (see the module text)."""
    if prep.get("height") or prep.get("width"):
        height = int(prep.get("height") or prep["width"])
        width = int(prep.get("width") or prep["height"])
    elif prep.get("infer_image_dimensions", True):
        height = min(
            round(float(np.mean([s[0] for s in sample]))),
            int(prep.get("infer_image_max_height") or 256),
        )
        width = min(
            round(float(np.mean([s[1] for s in sample]))),
            int(prep.get("infer_image_max_width") or 256),
        )
    else:
        height, width = sample[0][0], sample[0][1]
    if prep.get("requires_equal_dimensions") and height != width:
        height = width = min(height, width)
    return height, width


def infer_channels(sample: Sequence[tuple[int, int, int]], prep: Mapping[str, Any]) -> int:
    """Channels from ``num_channels`` or the sample (see the module text)."""
    if prep.get("num_channels"):
        return int(prep["num_channels"])
    if not (prep.get("infer_image_num_channels", True) or prep.get("infer_image_dimensions", True)):
        return sample[0][2]
    counts = Counter(s[2] for s in sample)
    for channels in (1, 2, 4):
        if counts[channels] > len(sample) / 2:
            return channels
    return 3


def standardization(
    prep: Mapping[str, Any], channels: int, column: str
) -> tuple[str | None, list[float] | None, list[float] | None]:
    """``(standardize_image, mean, std)``: ImageNet's per-channel values for 3 channels only."""
    wanted = prep.get("standardize_image")
    if wanted != "imagenet1k":
        return None, None, None
    if channels != 3:
        log.warning(
            "image column %r: standardize_image imagenet1k needs 3 channels, the images have %d; "
            "it is turned off (as Ludwig does)",
            column,
            channels,
        )
        return None, None, None
    return "imagenet1k", list(IMAGENET_MEAN), list(IMAGENET_STD)


def _fill_value(cells: Sequence[Any], prep: Mapping[str, Any]) -> Any:
    strategy = prep.get("missing_value_strategy") or "bfill"
    if strategy == "fill_with_const":
        value = prep.get("fill_value")
        return _GRAY_DEFAULT if value is None else float(value)
    if strategy == "fill_with_mode":
        paths = [c for c in cells if isinstance(c, str)]
        return Counter(paths).most_common(1)[0][0] if paths else None
    return None


def fit_image(
    series: pd.Series,
    prep: Mapping[str, Any],
    encoder: Mapping[str, Any],
    column: str,
) -> dict[str, Any]:
    """Metadata of an image input: size, channels, resize, normalisation, missing values.

    Raises :class:`DataError` when the column holds no image.
    """
    cells = [c for c in series.to_numpy(object) if not is_missing_cell(c)]
    if not cells:
        raise DataError(f"image column {column!r} has no images in the training split")
    meta: dict[str, Any] = {
        "missing_value_strategy": prep.get("missing_value_strategy") or "bfill",
        "fill_value": _fill_value(cells, prep),
        "resize_method": prep.get("resize_method") or "interpolate",
        "in_memory": bool(prep.get("in_memory", True)),
        "num_processes": int(prep.get("num_processes") or 1),
        "shorter_side": None,
        "torchvision": None,
    }
    preset = _preset(encoder)
    if preset is not None:
        return {**meta, **preset}
    count = int(prep.get("infer_image_sample_size") or 100)
    needs_sample = not ((prep.get("height") or prep.get("width")) and prep.get("num_channels"))
    sample = _sample(
        cells, count if prep.get("infer_image_dimensions", True) and needs_sample else 1
    )
    if not sample:
        raise DataError(f"image column {column!r}: none of the first images could be read")
    height, width = infer_size(sample, prep)
    channels = infer_channels(sample, prep)
    standardize, mean, std = standardization(prep, channels, column)
    return {
        **meta,
        "height": height,
        "width": width,
        "num_channels": channels,
        "standardize_image": standardize,
        "mean": mean,
        "std": std,
    }


def _preset(encoder: Mapping[str, Any]) -> dict[str, Any] | None:
    """A torchvision encoder's preprocessing (None for Ludwig's own encoders)."""
    if "model_variant" not in encoder:
        return None
    from ludwig_nb.engines.builtin.image.torchvision_encoders import preset_metadata

    return preset_metadata(str(encoder["type"]), encoder["model_variant"])
