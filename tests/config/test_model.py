"""Config: rendered views, copies, positions and lookups."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from ludwig_nb.config import ConfigWarning, load_config


def test_accessors_return_copies(minimal: str) -> None:
    cfg = load_config(minimal)
    cfg.input_features[0]["name"] = "changed"
    cfg.trainer["epochs"] = 1
    cfg.to_dict()["combiner"]["type"] = "tabnet"
    assert cfg.input_features[0]["name"] == "x"
    assert cfg.trainer["epochs"] == 100
    assert cfg.combiner["type"] == "concat"


def test_views(example_text: Callable[[str], str]) -> None:
    with pytest.warns(ConfigWarning, match="old syntax upgraded"):  # its encoder: <name>
        cfg = load_config(example_text("multi_output"))
    assert cfg.model_type == "ecd"
    assert cfg.feature_names[:2] == ["description", "tags"]
    assert cfg.feature("rating")["loss"]["type"] == "huber"
    assert cfg.preprocessing["split"]["type"] == "random"
    assert cfg.output_features[0]["name"] == "category"
    assert "description" in repr(cfg)


def test_unknown_feature_names_the_known_ones(minimal: str) -> None:
    with pytest.raises(KeyError, match="features: x, y"):
        load_config(minimal).feature("z")


def test_positions_of_what_was_written(minimal: str) -> None:
    cfg = load_config(minimal)
    assert cfg.position(("output_features", 0, "type")) == (6, 11)
    assert cfg.position(("trainer", "epochs")) is None
    assert load_config(yaml.safe_load(minimal)).position(("input_features",)) is None


def test_to_yaml_round_trips(example_text: Callable[[str], str]) -> None:
    cfg = load_config(example_text("adult_census"))
    assert yaml.safe_load(cfg.to_yaml()) == cfg.to_dict()


def test_equality_is_by_rendered_content(minimal: str) -> None:
    assert load_config(minimal) == load_config(yaml.safe_load(minimal))
    assert load_config(minimal) != load_config(minimal + "trainer: {epochs: 2}\n")
    assert load_config(minimal) != "config"
