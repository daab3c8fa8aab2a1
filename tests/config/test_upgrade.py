"""Old syntax Ludwig 0.11 upgrades silently: upgraded the same way, each with a located note."""

from __future__ import annotations

from typing import Any

import pytest

from ludwig_nb.config import ConfigWarning, load_config
from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.upgrade import upgrade

BASE: dict[str, Any] = {
    "input_features": [{"name": "x", "type": "number"}],
    "output_features": [{"name": "y", "type": "binary"}],
}


def _up(**more: Any) -> tuple[dict[str, Any], list[str]]:
    ctx = Ctx()
    return upgrade({**BASE, **more}, ctx), [n.path for n in ctx.notes]


def test_scheduler_keys_move_into_the_scheduler() -> None:
    config, notes = _up(trainer={"decay": True, "reduce_learning_rate_on_plateau": 2.0})
    assert config["trainer"] == {
        "learning_rate_scheduler": {"decay": "exponential", "reduce_on_plateau": 2}
    }
    assert sorted(notes) == ["trainer.decay", "trainer.reduce_learning_rate_on_plateau"]


def test_split_keys_become_a_split_section() -> None:
    config, notes = _up(preprocessing={"stratify": "y", "split_probabilities": [0.6, 0.2, 0.2]})
    assert config["preprocessing"]["split"] == {
        "probabilities": [0.6, 0.2, 0.2],
        "type": "stratify",
        "column": "y",
    }
    assert sorted(notes) == ["preprocessing.split_probabilities", "preprocessing.stratify"]


def test_per_type_preprocessing_moves_to_defaults_and_merges() -> None:
    config, _ = _up(
        preprocessing={"text": {"lowercase": True}, "sample_ratio": 0.5},
        defaults={"text": {"preprocessing": {"most_common": 10}}},
    )
    assert config["preprocessing"] == {"sample_ratio": 0.5}
    assert config["defaults"]["text"]["preprocessing"] == {"most_common": 10, "lowercase": True}


def test_level_and_bias_renames() -> None:
    feature = {"name": "t", "type": "text", "preprocessing": {"word_tokenizer": "space"}}
    dense = {"name": "n", "type": "number", "encoder": {"type": "dense", "bias": False}}
    config, notes = _up(input_features=[feature, dense])
    assert config["input_features"][0]["preprocessing"] == {"tokenizer": "space"}
    assert config["input_features"][1]["encoder"] == {"type": "dense", "use_bias": False}
    assert notes == [
        "input_features[0].preprocessing.word_tokenizer",
        "input_features[1].encoder.bias",
    ]


def test_decoder_fc_keys_gain_their_fc_prefix() -> None:
    out = {"name": "y", "type": "category", "output_size": 32, "num_fc_layers": 2}
    config, _ = _up(output_features=[out])
    assert config["output_features"][0] == {
        "name": "y",
        "type": "category",
        "decoder": {"fc_output_size": 32, "num_fc_layers": 2},
    }


def test_a_current_config_is_left_alone() -> None:
    config, notes = _up(ludwig_version="0.11.0", training={"epochs": 2})
    assert "training" in config and notes == []


def test_an_upgraded_config_renders_like_the_new_syntax() -> None:
    old = {**BASE, "training": {"epochs": 2, "eval_batch_size": 0, "type": "trainer"}}
    new = {**BASE, "trainer": {"epochs": 2, "eval_batch_size": None}}
    with pytest.warns(ConfigWarning):
        upgraded = load_config(old)
    assert upgraded == load_config(new)
    assert {w.path for w in upgraded.warnings} == {
        "training",
        "trainer.eval_batch_size",
        "trainer.type",
    }
