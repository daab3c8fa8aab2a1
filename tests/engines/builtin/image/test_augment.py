from __future__ import annotations

import pytest
import torch

from ludwig_nb.engines.builtin.image.augment import OPERATIONS, Augmentation

LUDWIG_OPERATIONS = {
    "random_horizontal_flip",
    "random_vertical_flip",
    "random_rotate",
    "random_blur",
    "random_brightness",
    "random_contrast",
}


def _batch(n: int = 64) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.rand(n, 3, 9, 9)


def _augment(ops, images, seed=1):
    aug = Augmentation(ops).train()
    aug.use_generator(torch.Generator().manual_seed(seed))
    return aug(images)


def test_the_operations_are_ludwigs_list():
    assert set(OPERATIONS) == LUDWIG_OPERATIONS


def test_nothing_changes_in_evaluation_mode():
    images = _batch()
    aug = Augmentation([{"type": t} for t in LUDWIG_OPERATIONS]).eval()
    assert aug(images) is images


def test_flips_touch_about_half_the_images_each_its_own():
    images = _batch()
    out = _augment([{"type": "random_horizontal_flip"}], images)
    flipped = [bool(torch.equal(o, i.flip(-1))) for o, i in zip(out, images, strict=True)]
    same = [bool(torch.equal(o, i)) for o, i in zip(out, images, strict=True)]
    assert all(f != s for f, s in zip(flipped, same, strict=True))
    assert 16 < sum(flipped) < 48  # per image, not one coin for the batch
    vertical = _augment([{"type": "random_vertical_flip"}], images)
    assert any(torch.equal(o, i.flip(-2)) for o, i in zip(vertical, images, strict=True))


def test_rotation_by_90_degrees_moves_pixels_and_keeps_the_shape():
    image = torch.zeros(1, 1, 5, 5)
    image[0, 0, 0, 2] = 1.0  # top middle
    aug = Augmentation([{"type": "random_rotate", "degree": 90}]).train()
    aug.uniform = lambda images, low=0.0, high=1.0: torch.full(  # type: ignore[method-assign]
        (images.shape[0], 1, 1, 1), high - 1e-6 if high > 1 else 0.0
    )
    out = aug(image)
    assert out.shape == image.shape and out.sum() == 1.0
    assert out[0, 0, 0, 2] == 0.0  # moved to a side


def test_brightness_and_contrast_stay_in_range_and_change_pixels():
    images = _batch()
    for op in ("random_brightness", "random_contrast"):
        out = _augment([{"type": op, "min": 0.1, "max": 3.0}], images)
        assert out.min() >= 0.0 and out.max() <= 1.0
        assert not torch.equal(out, images)


def test_blur_smooths_the_images_it_picks():
    images = _batch()
    out = _augment([{"type": "random_blur", "kernel_size": 3}], images)
    changed = [not torch.equal(o, i) for o, i in zip(out, images, strict=True)]
    assert 0 < sum(changed) < len(images)
    picked = changed.index(True)
    assert out[picked].std() < images[picked].std()


def test_the_runs_generator_makes_it_reproducible():
    images = _batch()
    ops = [{"type": t} for t in sorted(LUDWIG_OPERATIONS)]
    assert torch.equal(_augment(ops, images, seed=5), _augment(ops, images, seed=5))
    assert not torch.equal(_augment(ops, images, seed=5), _augment(ops, images, seed=6))


def test_an_unknown_operation_is_refused():
    with pytest.raises(ValueError, match="auto_augmentation"):
        Augmentation([{"type": "auto_augmentation"}])
