"""Specs built from the snapshot of Ludwig 0.11's JSON schema: variants, unknown keys, unions."""

from __future__ import annotations

import json

from ludwig_nb.config import LUDWIG_VERSION
from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.schema.ludwig_json import (
    SNAPSHOT_PATH,
    JAnyOf,
    JObject,
    ludwig_spec,
)


def _encoder(ftype: str) -> JObject:
    feature = ludwig_spec("ecd", "input_features", "[]")
    assert isinstance(feature, JObject)
    encoder = feature.fields_for({"type": ftype})["encoder"]
    assert isinstance(encoder, JObject)
    return encoder


def test_snapshot_is_of_the_ludwig_release_we_follow() -> None:
    assert json.loads(SNAPSHOT_PATH.read_text())["ludwig_version"] == LUDWIG_VERSION


def test_type_picks_the_variant_and_its_defaults() -> None:
    ctx = Ctx()
    dense = _encoder("number").check({"type": "dense"}, ("e",), ctx)
    assert not ctx.problems
    assert (dense["type"], dense["output_size"], dense["num_layers"]) == ("dense", 256, 1)
    assert _encoder("number").default() == {"type": "passthrough", "skip": False}


def test_a_string_is_shorthand_for_its_type() -> None:
    ctx = Ctx()
    assert _encoder("text").check("rnn", ("e",), ctx)["cell_type"] == "rnn"
    assert not ctx.problems


def test_unknown_type_is_located_with_a_suggestion() -> None:
    ctx = Ctx()
    _encoder("text").check({"type": "trnsformer"}, ("input_features", 0, "encoder"), ctx)
    (problem,) = ctx.problems
    assert problem.path == "input_features[0].encoder.type"
    assert problem.message == "unknown encoder 'trnsformer'"
    assert problem.hint == "did you mean 'transformer'?"


def test_closed_sections_refuse_unknown_keys_open_ones_warn() -> None:
    ctx = Ctx()
    ludwig_spec("ecd", "trainer").check({"epoch": 3}, ("trainer",), ctx)
    assert [(p.path, p.hint) for p in ctx.problems] == [("trainer.epoch", "did you mean 'epochs'?")]
    ctx = Ctx()
    rendered = _encoder("number").check({"type": "dense", "outputsize": 3}, ("e",), ctx)
    assert not ctx.problems and "outputsize" not in rendered
    assert [(n.path, n.hint) for n in ctx.notes] == [
        ("e.outputsize", "did you mean 'output_size'?")
    ]


def test_unions_take_either_form() -> None:
    batch = ludwig_spec("ecd", "trainer").fields_for({})["batch_size"]  # type: ignore[attr-defined]
    assert isinstance(batch, JAnyOf)
    for good in ("auto", 8):
        ctx = Ctx()
        assert batch.check(good, ("b",), ctx) == good and not ctx.problems
    ctx = Ctx()
    batch.check("big", ("b",), ctx)
    assert len(ctx.problems) == 1 and "auto" in str(ctx.problems[0])


def test_an_initializer_mapping_is_checked_inside() -> None:
    init = _encoder("number").fields_for({"type": "dense"})["weights_initializer"]
    ctx = Ctx()
    assert init.check({"type": "normal", "std": 0.1}, ("w",), ctx)["type"] == "normal"
    assert not ctx.problems
    init.check({"type": "gaussian"}, ("w",), ctx)
    assert [p.path for p in ctx.problems] == ["w.type"]


def test_json_integers_accept_whole_floats_but_not_booleans() -> None:
    epochs = ludwig_spec("ecd", "trainer").fields_for({})["epochs"]  # type: ignore[attr-defined]
    ctx = Ctx()
    assert epochs.check(2.0, ("e",), ctx) == 2.0 and not ctx.problems
    epochs.check(True, ("e",), ctx)
    assert ctx.problems[0].message == "must be an integer, not a boolean"


def test_missing_required_key_names_the_misspelling() -> None:
    ctx = Ctx()
    ludwig_spec("ecd", "input_features", "[]").check({"nme": "x", "type": "number"}, ("f",), ctx)
    assert [(p.message, p.hint) for p in ctx.problems] == [
        ("missing required key 'name'", "is 'nme' a misspelling of 'name'?")
    ]
