from __future__ import annotations

import numpy as np
import pytest

from ludwig_nb.engines.builtin.image.cells import Constant
from ludwig_nb.engines.builtin.image.pixels import (
    Geometry,
    UnreadableImage,
    decode,
    read_pixels,
    reshape,
)


def test_gray_png_read_as_three_channels_repeats_the_gray(png):
    gray = np.arange(16, dtype=np.uint8).reshape(4, 4) * 10
    pixels = read_pixels(str(png(gray)), 3)
    assert pixels.shape == (4, 4, 3)
    assert (pixels[:, :, 0] == gray).all() and (pixels[:, :, 2] == gray).all()


def test_rgb_read_as_one_channel_is_its_luma(png):
    rgb = np.zeros((2, 2, 3), np.uint8)
    rgb[..., 0] = 200  # pure red: ITU-R 601 luma 0.299 * 200 = 59.8
    pixels = read_pixels(str(png(rgb)), 1)
    assert pixels.shape == (2, 2, 1)
    assert abs(int(pixels[0, 0, 0]) - 60) <= 1


def test_rgba_keeps_its_alpha_when_four_channels_are_asked(png):
    rgba = np.full((3, 3, 4), 7, np.uint8)
    rgba[..., 3] = 99
    assert read_pixels(str(png(rgba)), 4)[0, 0].tolist() == [7, 7, 7, 99]


def test_arrays_gray_from_rgb_zero_padded_or_cut():
    rgb = np.full((2, 2, 3), [100, 50, 0], np.uint8)
    assert read_pixels(rgb, 1)[0, 0, 0] == round(0.2989 * 100 + 0.587 * 50)
    padded = read_pixels(np.full((2, 2), 9, np.uint8), 3)
    assert padded[0, 0].tolist() == [9, 0, 0]  # Ludwig pads arrays with zero channels
    assert read_pixels(np.zeros((2, 2, 4), np.uint8), 3).shape == (2, 2, 3)


def test_float_and_16_bit_arrays_become_bytes():
    assert read_pixels(np.full((1, 1), 300.7), 1)[0, 0, 0] == 255
    assert read_pixels(np.full((1, 1), 65535, np.uint16), 1)[0, 0, 0] == 255


def test_16_bit_png_is_scaled_to_8_bits(png):
    from PIL import Image

    path = png(np.zeros((2, 2), np.uint8))
    Image.fromarray(np.full((2, 2), 65535, np.uint16)).save(path)
    assert read_pixels(str(path), 1)[0, 0, 0] == 255


def test_interpolate_resizes_and_returns_channels_first():
    pixels = np.zeros((10, 20, 3), np.uint8)
    out = reshape(pixels, Geometry(5, 7, 3))
    assert out.shape == (3, 5, 7) and out.flags.c_contiguous


@pytest.mark.parametrize(("source", "target"), [((37, 53), (16, 16)), ((16, 16), (40, 24))])
def test_interpolate_matches_torchs_antialiased_bilinear(source, target):
    """Ludwig resizes with torchvision's antialiased bilinear resize: within one gray level."""
    import torch

    pixels = np.random.default_rng(0).integers(0, 256, (*source, 3), dtype=np.uint8)
    ours = reshape(pixels, Geometry(*target, 3)).astype(int)
    batch = torch.from_numpy(pixels).permute(2, 0, 1)[None].float()
    theirs = torch.nn.functional.interpolate(
        batch, size=target, mode="bilinear", antialias=True, align_corners=False
    )
    assert np.abs(ours - theirs[0].round().clamp(0, 255).int().numpy()).max() <= 1


def test_crop_or_pad_pads_edges_then_crops_the_centre():
    pixels = np.arange(9, dtype=np.uint8).reshape(3, 3, 1)
    padded = reshape(pixels, Geometry(5, 5, 1, "crop_or_pad"))[0]
    assert padded[0].tolist() == [0, 0, 1, 2, 2]  # edge replication, Ludwig's padding_mode
    cropped = reshape(
        np.arange(36, dtype=np.uint8).reshape(6, 6, 1), Geometry(2, 4, 1, "crop_or_pad")
    )
    assert cropped[0].tolist() == [[13, 14, 15, 16], [19, 20, 21, 22]]


def test_a_colour_png_read_as_gray_takes_libpngs_fixed_point_weights(png):
    rgb = np.random.default_rng(3).integers(0, 256, size=(16, 16, 3), dtype=np.uint8)
    pixels = read_pixels(str(png(rgb)), 1)[:, :, 0].astype(np.int64)
    r, g, b = (rgb[:, :, i].astype(np.int64) for i in range(3))
    # what torchvision's PNG decoder (libpng, weights 0.2989 and 0.587) gives Ludwig
    assert (pixels == (9794 * r + 19234 * g + 3740 * b) >> 15).all()


def test_an_rgb_array_read_as_gray_is_truncated_as_torchvisions_rgb_to_grayscale():
    rgb = np.zeros((1, 1, 3), np.uint8)
    rgb[..., 0] = 200  # 0.2989 * 200 = 59.78: torchvision's uint8 cast keeps 59
    assert int(read_pixels(rgb, 1)[0, 0, 0]) == 59


def test_a_bicubic_preset_resizes_bicubically():
    from PIL import Image

    pixels = np.random.default_rng(4).integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    out = reshape(pixels, Geometry(16, 16, 3, shorter_side=16, interpolation="bicubic"))
    wanted = np.asarray(Image.fromarray(pixels).resize((16, 16), Image.Resampling.BICUBIC))
    assert (out.transpose(1, 2, 0) == wanted).all()
    bilinear = reshape(pixels, Geometry(16, 16, 3, shorter_side=16))
    assert not (bilinear == out).all()


def test_torchvision_preset_resizes_the_shorter_side_then_crops():
    pixels = np.zeros((40, 80, 3), np.uint8)
    pixels[:, 38:42] = 255  # a bright bar in the middle survives the centre crop
    out = reshape(pixels, Geometry(16, 16, 3, shorter_side=20))
    assert out.shape == (3, 16, 16)
    assert out[:, :, 7:9].mean() > 100 and out[:, :, 0].max() == 0


def test_decode_constant_cells_are_flat_images():
    out = decode(Constant(128), Geometry(3, 4, 2))
    assert out.shape == (2, 3, 4) and (out == 128).all()


def test_decode_raises_unreadable_for_what_is_no_image(tmp_path):
    with pytest.raises(UnreadableImage, match="no such file"):
        decode(str(tmp_path / "x.png"), Geometry(2, 2, 1))
    with pytest.raises(UnreadableImage, match="URL"):
        decode("http://x.org/a.png", Geometry(2, 2, 1))
