"""Ludwig's own post-schema checks, located where the user wrote the config."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ludwig_nb.config import ConfigError, load_config

HEAD = "input_features:\n  - name: x\n    type: number\n"
OUT = "output_features:\n  - name: y\n    type: binary\n"


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        (
            HEAD + OUT + "combiner:\n  type: comparator\n  entity_1: [x]\n",
            "combiner.entity_2",
            "needs entity_2",
        ),
        (
            HEAD + OUT + "combiner:\n  type: comparator\n  entity_1: [x]\n  entity_2: [z]\n",
            "combiner.entity_2[0]",
            "no input feature named 'z'",
        ),
        (
            HEAD + OUT + "preprocessing:\n  split: {type: stratify, column: x}\n",
            "preprocessing.split.column",
            "binary or category",
        ),
        (
            "input_features:\n  - name: t\n    type: text\n    encoder: {type: auto_transformer}\n"
            + OUT,
            "input_features[0].encoder",
            "pretrained_model_name_or_path",
        ),
        (
            "input_features:\n  - name: t\n    type: text\n"
            "    encoder: {type: transformer, hidden_size: 10, num_heads: 3}\n" + OUT,
            "input_features[0].encoder.hidden_size",
            "divisible",
        ),
        (
            HEAD + "output_features:\n  - name: y\n    type: text\n    decoder: {type: tagger}\n",
            "output_features[0].decoder.type",
            "tagger",
        ),
        (
            HEAD + "output_features:\n  - name: y\n    type: category_distribution\n",
            "output_features[0].preprocessing",
            "vocab",
        ),
        (
            HEAD
            + "  - name: s\n    type: sequence\n    encoder: {type: rnn, reduce_output: null}\n"
            + OUT,
            "input_features[1].encoder.reduce_output",
            "concat combiner",
        ),
        (
            HEAD
            + OUT
            + "preprocessing:\n  oversample_minority: 0.5\n  undersample_majority: 0.5\n",
            "preprocessing.undersample_majority",
            "cannot both",
        ),
        (
            "model_type: llm\nbase_model: m\ninput_features:\n  - {name: a, type: number}\n"
            "output_features:\n  - {name: b, type: text}\n",
            "input_features",
            "exactly one text input",
        ),
    ],
)
def test_ludwigs_checks_are_located(
    fail: Callable[..., ConfigError], text: str, path: str, words: str
) -> None:
    err = fail(text)
    matching = [e for e in err.errors if e.path == path]
    assert matching and words in matching[0].message and matching[0].line is not None


def test_a_valid_comparator_passes() -> None:
    text = (
        "input_features:\n  - {name: a, type: number}\n  - {name: b, type: number}\n"
        + OUT
        + "combiner: {type: comparator, entity_1: [a], entity_2: [b]}\n"
    )
    assert load_config(text).combiner["entity_1"] == ["a"]
