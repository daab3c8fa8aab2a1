"""One cell to ``channels x height x width`` uint8 pixels: numpy and Pillow, never torch.

Worker processes decode with this module alone. The rules are Ludwig 0.11's:

* **channels**: an image is read in the mode its channel count names (1 gray, 2 gray + alpha,
  3 RGB, 4 RGBA); a colour PNG read as gray takes libpng's weights, as torchvision's decoder
  does; an array with more channels than wanted keeps the first ones (for 1, grayscale from RGB
  by torchvision's ``rgb_to_grayscale``, truncated), one with fewer is padded with zero channels.
* **resize_method** ``interpolate``: bilinear with antialiasing (Pillow's filter, the one
  torchvision's antialiased resize matches); ``crop_or_pad``: edge-replicate padding of the short
  sides, then a centre crop.
* **torchvision presets** (:attr:`Geometry.shorter_side`): the shorter side resized to that many
  pixels (with the preset's filter, bilinear or bicubic), then centre-cropped to ``height x
  width``, 3 channels.

16-bit images are scaled to 8 bits; arrays hold pixel values 0-255 (others are clipped).
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import numpy as np

from ludwig_nb.engines.builtin.image.cells import Constant, cell_kind

__all__ = ["Geometry", "UnreadableImage", "decode", "open_image", "read_pixels", "reshape"]

_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_GRAY = np.array([0.2989, 0.587, 0.114], dtype=np.float32)  # torchvision's rgb_to_grayscale
#: libpng's fixed-point weights (of 2**15) for torchvision's 0.2989 / 0.587 when it reads a PNG
#: as gray: ``(9794 R + 19234 G + 3740 B) >> 15``
_PNG_GRAY = np.array([9794, 19234, 3740], dtype=np.int64)
_COLOUR_MODES = ("RGB", "RGBA", "P", "PA", "RGBX")


class UnreadableImage(ValueError):
    """A cell that holds no image this module can decode; the message says why."""


@dataclasses.dataclass(frozen=True)
class Geometry:
    """What every image of a feature becomes: ``channels x height x width`` uint8.

    Args:
        height: Rows of pixels.
        width: Columns of pixels.
        channels: Channels (1 gray, 2 gray + alpha, 3 RGB, 4 RGBA, more: zero-padded).
        resize_method: ``interpolate`` or ``crop_or_pad``.
        shorter_side: For a torchvision preset: the shorter side is resized to this many pixels,
            then the centre ``height x width`` is cropped; None for Ludwig's own encoders.
        interpolation: The preset's resize filter, ``bilinear`` or ``bicubic`` (antialiased).
    """

    height: int
    width: int
    channels: int
    resize_method: str = "interpolate"
    shorter_side: int | None = None
    interpolation: str = "bilinear"

    @property
    def row_bytes(self) -> int:
        """Bytes of one decoded image."""
        return self.height * self.width * self.channels


def open_image(cell: Any) -> Any:
    """The ``PIL.Image`` (not decoded yet) or the numpy array a cell holds.

    Raises :class:`UnreadableImage` (no such file, not an image, a URL, ...).
    """
    kind = cell_kind(cell)
    if kind == "array":
        return _check_array(cell)
    if kind == "pil":
        return cell
    if kind == "path":
        if str(cell).lower().endswith(".npy"):
            return _load_npy(Path(cell))
        return _pil_open(Path(cell))
    if kind == "bytes":
        return _pil_open(io.BytesIO(bytes(cell)))
    if kind == "url":
        raise UnreadableImage("a URL: images are read from files, bytes or arrays, not downloaded")
    raise UnreadableImage(f"holds a {type(cell).__name__}, not an image")


def _pil_open(source: Any) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        return Image.open(source)
    except FileNotFoundError:
        raise UnreadableImage("no such file") from None
    except IsADirectoryError:
        raise UnreadableImage("a directory, not an image file") from None
    except UnidentifiedImageError:
        raise UnreadableImage("not an image Pillow can read") from None
    except OSError as err:
        raise UnreadableImage(f"unreadable ({err.strerror or err})") from None


def _load_npy(path: Path) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UnreadableImage("no such file") from None
    except (OSError, ValueError) as err:
        raise UnreadableImage(f"not a readable .npy array ({err})") from None
    return _check_array(array)


def _check_array(array: np.ndarray) -> np.ndarray:
    if array.ndim not in (2, 3) or 0 in array.shape:
        raise UnreadableImage(f"an array of shape {array.shape}, not H x W or H x W x C")
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise UnreadableImage(f"an array of {array.dtype}, not numbers")
    return array


def read_pixels(cell: Any, channels: int) -> np.ndarray:
    """``H x W x channels`` uint8 pixels of a cell, converted as Ludwig reads them.

    Raises :class:`UnreadableImage`.
    """
    opened = open_image(cell)
    if isinstance(opened, np.ndarray):
        return _array_channels(_as_uint8(_check_array(opened)), channels)
    try:
        return _pil_channels(opened, channels)
    except (OSError, SyntaxError, ValueError) as err:  # truncated or corrupt data
        raise UnreadableImage(f"cannot be decoded ({err})") from None


def _as_uint8(array: np.ndarray) -> np.ndarray:
    if array.ndim == 2:
        array = array[:, :, None]
    if array.dtype == np.uint8:
        return array
    if array.dtype == np.uint16:
        return (array.astype(np.float32) / 257.0).round().astype(np.uint8)
    return np.clip(np.nan_to_num(array.astype(np.float32)), 0, 255).round().astype(np.uint8)


def _array_channels(array: np.ndarray, channels: int) -> np.ndarray:
    have = array.shape[2]
    if have == channels:
        return array
    if channels == 1 and have >= 3:  # torchvision's rgb_to_grayscale, truncated to uint8
        gray: np.ndarray = array[:, :, :3].astype(np.float32) @ _GRAY
        single: np.ndarray = np.clip(gray, 0, 255).astype(np.uint8)[:, :, None]
        return single
    if have > channels:
        kept: np.ndarray = np.ascontiguousarray(array[:, :, :channels])
        return kept
    pad = np.zeros((*array.shape[:2], channels - have), dtype=np.uint8)
    return np.concatenate([array, pad], axis=2)


def _pil_channels(image: Any, channels: int) -> np.ndarray:
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        image.load()
        return _array_channels(_as_uint8(_sixteen_bit(image)), channels)
    if channels == 1 and image.format == "PNG" and image.mode in _COLOUR_MODES:
        return _png_gray(np.asarray(image.convert("RGB")))
    mode = _MODES.get(channels)
    if mode is None:  # more than 4 channels: read as it is, pad with zero channels
        return _array_channels(_as_uint8(np.asarray(image.convert("RGBA"))), channels)
    array: np.ndarray = np.asarray(image.convert(mode))
    return array[:, :, None] if array.ndim == 2 else array


def _png_gray(rgb: np.ndarray) -> np.ndarray:
    """``H x W x 1`` gray of ``H x W x 3`` uint8 RGB, as libpng makes it (Ludwig reads PNGs so)."""
    weighted = rgb.astype(np.int64) @ _PNG_GRAY
    return (weighted >> 15).astype(np.uint8)[:, :, None]


def _sixteen_bit(image: Any) -> np.ndarray:
    """Pixels of a 16-bit or 32-bit integer image (scaled from 0-65535) or a float one."""
    array = np.asarray(image).astype(np.float32)
    if image.mode != "F" and array.max(initial=0.0) > 255.0:
        array /= 257.0
    return array


def reshape(pixels: np.ndarray, geometry: Geometry) -> np.ndarray:
    """``H x W x C`` uint8 resized as ``geometry`` says, returned ``C x H x W`` (contiguous)."""
    target = (geometry.height, geometry.width)
    if geometry.shorter_side is not None:
        resized = _resize_shorter(pixels, geometry.shorter_side, geometry.interpolation)
        pixels = _center_crop(resized, target)
    elif pixels.shape[:2] != target:
        if geometry.resize_method == "crop_or_pad":
            pixels = _center_crop(_pad_edges(pixels, target), target)
        else:
            pixels = _interpolate(pixels, target)
    return np.ascontiguousarray(pixels.transpose(2, 0, 1))


def _interpolate(
    pixels: np.ndarray, size: tuple[int, int], interpolation: str = "bilinear"
) -> np.ndarray:
    from PIL import Image

    height, width = size
    channels = pixels.shape[2]
    resample = Image.Resampling.BICUBIC if interpolation == "bicubic" else Image.Resampling.BILINEAR
    if channels in (1, 3, 4):
        image = Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels)
        out = np.asarray(image.resize((width, height), resample))
        return out[:, :, None] if out.ndim == 2 else out
    planes = [
        np.asarray(Image.fromarray(pixels[:, :, c]).resize((width, height), resample))
        for c in range(channels)
    ]
    return np.stack(planes, axis=2)


def _resize_shorter(pixels: np.ndarray, side: int, interpolation: str) -> np.ndarray:
    height, width = pixels.shape[:2]
    if height <= width:
        size = (side, int(side * width / height))
    else:
        size = (int(side * height / width), side)
    return pixels if size == (height, width) else _interpolate(pixels, size, interpolation)


def _pad_edges(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    grow = [max(0, want - have) for want, have in zip(size, pixels.shape[:2], strict=True)]
    if not any(grow):
        return pixels
    widths = [(g // 2, g - g // 2) for g in grow] + [(0, 0)]
    return np.pad(pixels, widths, mode="edge")


def _center_crop(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    height, width = pixels.shape[:2]
    top = round((height - size[0]) / 2.0)
    left = round((width - size[1]) / 2.0)
    return pixels[top : top + size[0], left : left + size[1]]


def decode(cell: Any, geometry: Geometry) -> np.ndarray:
    """One cell as ``C x H x W`` uint8 (a :class:`Constant` as a flat image).

    Raises :class:`UnreadableImage`.
    """
    if isinstance(cell, Constant):
        shape = (geometry.channels, geometry.height, geometry.width)
        return np.full(shape, round(min(255.0, max(0.0, cell.value))), dtype=np.uint8)
    channels = 3 if geometry.shorter_side is not None else geometry.channels
    return reshape(read_pixels(cell, channels), geometry)
