"""Feature rendering details that Ludwig applies beside its schema."""

from __future__ import annotations

import pytest

from ludwig_nb.config import ConfigWarning, load_config

IMAGE = """\
input_features:
  - name: img
    type: image
    encoder: {type: %s}
    preprocessing: {height: 32, width: 48}
output_features:
  - {name: y, type: category}
"""


def test_ludwigs_own_image_encoders_drop_height_and_width_and_it_is_said():
    with pytest.warns(ConfigWarning, match="ignores height"):
        config = load_config(IMAGE % "stacked_cnn")
    prep = config.to_dict()["input_features"][0]["preprocessing"]
    assert (prep["height"], prep["width"]) == (None, None)  # as Ludwig 0.11 renders it
    [note] = config.warnings
    assert (note.line, note.path) == (5, "input_features[0].preprocessing.height")
    assert "Ludwig 0.11 ignores height with its own image encoders" in note.message
    assert "infer_image_max_height" in (note.hint or "")


def test_a_torchvision_encoder_keeps_the_size_without_a_note():
    config = load_config(IMAGE % "resnet")
    prep = config.to_dict()["input_features"][0]["preprocessing"]
    assert (prep["height"], prep["width"]) == (32, 48)
    assert config.warnings == ()


def test_augmentation_true_is_ludwigs_default_operations():
    text = IMAGE.replace("    preprocessing: {height: 32, width: 48}\n", "    augmentation: true\n")
    feature = load_config(text % "stacked_cnn").to_dict()["input_features"][0]
    assert [op["type"] for op in feature["augmentation"]] == [
        "random_horizontal_flip",
        "random_rotate",
    ]
