"""Old syntax Ludwig 0.11 upgrades silently: upgraded the same way, each with a located note."""

from __future__ import annotations

from typing import Any

import pytest

from ludwig_nb.config import ConfigError, ConfigWarning, load_config
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


# -- the old spelling beside the new one: merged when they agree, refused at both lines -------

TRAINER_AND_TRAINING = """\
input_features:
  - {name: x, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2}
training: {batch_size: 32}
"""


def test_training_beside_trainer_merges_key_by_key() -> None:
    with pytest.warns(ConfigWarning, match="merged with the 'trainer' section"):
        config = load_config(TRAINER_AND_TRAINING)
    trainer = config.to_dict()["trainer"]
    assert (trainer["epochs"], trainer["batch_size"]) == (2, 32)


def test_training_and_trainer_setting_one_key_differently_are_refused_at_both_lines() -> None:
    text = TRAINER_AND_TRAINING.replace("batch_size: 32", "epochs: 6")
    with pytest.raises(ConfigError) as caught:
        load_config(text)
    where = sorted((e.line, e.path) for e in caught.value.errors)
    assert where == [(5, "trainer.epochs"), (6, "training.epochs")]
    for problem in caught.value.errors:
        assert "'training.epochs' (old syntax, 6) and 'trainer.epochs' (2)" in problem.message


def test_the_same_value_both_ways_is_kept_once() -> None:
    config, _ = _up(trainer={"epochs": 3}, training={"epochs": 3, "batch_size": 8})
    assert config["trainer"] == {"epochs": 3, "batch_size": 8}


def _problems(**more: Any) -> list[str]:
    ctx = Ctx()
    upgrade({**BASE, **more}, ctx)
    return sorted(p.path for p in ctx.problems)


@pytest.mark.parametrize(
    ("more", "paths"),
    [
        (  # a renamed key beside its new name (bias / use_bias)
            {
                "input_features": [
                    {"name": "x", "type": "number", "encoder": {"bias": False, "use_bias": True}}
                ]
            },
            ["input_features[0].encoder.bias", "input_features[0].encoder.use_bias"],
        ),
        (  # a sequence level rename beside the new key
            {
                "input_features": [
                    {
                        "name": "t",
                        "type": "text",
                        "preprocessing": {"word_most_common": 5, "most_common": 9},
                    }
                ]
            },
            [
                "input_features[0].preprocessing.most_common",
                "input_features[0].preprocessing.word_most_common",
            ],
        ),
        (  # an encoder parameter on the feature and under encoder:
            {
                "input_features": [
                    {
                        "name": "x",
                        "type": "number",
                        "dropout": 0.1,
                        "encoder": {"type": "dense", "dropout": 0.3},
                    }
                ]
            },
            ["input_features[0].dropout", "input_features[0].encoder.dropout"],
        ),
        (  # per-type preprocessing and defaults.<type>.preprocessing
            {
                "preprocessing": {"number": {"normalization": "zscore"}},
                "defaults": {"number": {"preprocessing": {"normalization": "minmax"}}},
            },
            ["defaults.number.preprocessing.normalization", "preprocessing.number.normalization"],
        ),
        (  # split_probabilities beside split.probabilities
            {
                "preprocessing": {
                    "split_probabilities": [0.6, 0.2, 0.2],
                    "split": {"probabilities": [0.7, 0.1, 0.2]},
                }
            },
            ["preprocessing.split.probabilities", "preprocessing.split_probabilities"],
        ),
        (  # an old scheduler key beside the scheduler's own
            {"trainer": {"decay_rate": 0.5, "learning_rate_scheduler": {"decay_rate": 0.9}}},
            ["trainer.decay_rate", "trainer.learning_rate_scheduler.decay_rate"],
        ),
        (  # the old increase_batch_size_on_plateau_max beside max_batch_size
            {"trainer": {"increase_batch_size_on_plateau_max": 64, "max_batch_size": 128}},
            ["trainer.increase_batch_size_on_plateau_max", "trainer.max_batch_size"],
        ),
    ],
    ids=["bias", "level", "encoder", "defaults", "split", "scheduler", "max_batch_size"],
)
def test_every_old_and_new_pair_refuses_a_conflict_at_both_keys(
    more: dict[str, Any], paths: list[str]
) -> None:
    assert _problems(**more) == paths


def test_every_old_and_new_pair_merges_what_agrees() -> None:
    config, _ = _up(
        trainer={"decay_rate": 0.5, "learning_rate_scheduler": {"decay_rate": 0.5}},
        preprocessing={"split_probabilities": [0.7, 0.1, 0.2], "split": {"type": "random"}},
    )
    assert config["trainer"] == {"learning_rate_scheduler": {"decay_rate": 0.5}}
    assert config["preprocessing"]["split"] == {"type": "random", "probabilities": [0.7, 0.1, 0.2]}
