"""load_config end to end: sources, line offsets, and each mistake located."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from ludwig_nb.config import Config, ConfigError, ConfigWarning, load_config

EXAMPLES = ["titanic", "adult_census", "text_classification", "multi_output"]
#: the examples written in Ludwig's old ``encoder: <name>`` syntax, which load_config upgrades
OLD_SYNTAX = {"text_classification", "multi_output"}


@pytest.mark.parametrize("stem", EXAMPLES)
def test_ludwig_examples_load_and_render_stably(
    stem: str, example_text: Callable[[str], str]
) -> None:
    if stem in OLD_SYNTAX:
        with pytest.warns(ConfigWarning, match="old syntax upgraded"):
            cfg = load_config(example_text(stem))
    else:
        cfg = load_config(example_text(stem))
    rendered = cfg.to_dict()
    assert load_config(rendered).to_dict() == rendered  # and, rendered, it warns no more
    assert load_config(cfg.to_yaml()).to_dict() == rendered
    assert load_config(cfg) == cfg


def test_every_valid_ludwig_config_is_accepted_whatever_the_engine(
    example_text: Callable[[str], str],
) -> None:
    cfg = load_config(example_text("mnist_image"))  # what an engine runs is the engine's say
    assert cfg.input_features[0]["encoder"]["conv_layers"][1]["dropout"] == 0.4
    assert cfg.positions is not None and cfg.positions.locate(("input_features", 0, "type"))


def test_dict_source_has_no_positions(fail: Callable[..., ConfigError], minimal: str) -> None:
    data = yaml.safe_load(minimal)
    data["trainer"] = {"epochs": 0}
    err = fail(data)
    assert (err.line, err.column, err.path) == (None, None, "trainer.epochs")


@pytest.mark.parametrize("source", [42, None, ["a"], b"input_features: []"])
def test_wrong_source_kind(fail: Callable[..., ConfigError], source: object) -> None:
    assert "YAML text, a dict or a Config" in fail(source).message


def test_non_string_keys_in_a_dict(fail: Callable[..., ConfigError]) -> None:
    assert "keys must be strings" in fail({1: "a"}).message


def test_line_offset_for_a_cell_magic(fail: Callable[..., ConfigError], minimal: str) -> None:
    err = fail(minimal + "trainer:\n  epochs: -1\n", line_offset=1)
    assert (err.line, err.path) == (9, "trainer.epochs")
    assert str(err).startswith("line 9, trainer.epochs")


def test_line_offset_applies_to_yaml_errors(fail: Callable[..., ConfigError]) -> None:
    assert fail("a: 1\na: 2\n", line_offset=1).line == 3


# --------------------------------------------------------------- each mistake, located
CASES = [
    # (appended YAML, line, path, words in message, words in hint)
    ("trainer:\n  batch_sze: 8\n", 8, "trainer.batch_sze", "unknown key", "batch_size"),
    ("trainer:\n  epochs: five\n", 8, "trainer.epochs", "must be an integer", None),
    ("trainer:\n  epochs: 0\n", 8, "trainer.epochs", "must be >= 1", None),
    ("trainer:\n  learning_rate: 2\n", 8, "trainer.learning_rate", "<= 1", None),
    ("trainer:\n  optimizer:\n    type: adamz\n", 9, "trainer.optimizer.type", "adamz", "adam"),
    (
        "trainer:\n  learning_rate_scheduler:\n    decay: cosin\n",
        9,
        "trainer.learning_rate_scheduler.decay",
        "cosin",
        "cosine",
    ),
    ("combiner:\n  type: concatz\n", 8, "combiner.type", "unknown combiner", "concat"),
    ("combiner:\n  num_fc_layers: 2\n", 7, "combiner", "missing required key 'type'", None),
    (
        "combiner:\n  type: concat\n  num_fc_layers: two\n",
        9,
        "combiner.num_fc_layers",
        "integer",
        None,
    ),
    (
        "preprocessing:\n  split:\n    type: randm\n",
        9,
        "preprocessing.split.type",
        "randm",
        "random",
    ),
    ("preprocessing:\n  sample_ratio: -1\n", 8, "preprocessing.sample_ratio", ">= 0", None),
    ("gpu_watch:\n  interval: 0.1\n", 8, "gpu_watch.interval", ">= 0.25", None),
    (
        "trainer:\n  use_mixed_precision: 'yes'\n",
        8,
        "trainer.use_mixed_precision",
        "true or false",
        None,
    ),
]


@pytest.mark.parametrize(("extra", "line", "path", "message", "hint"), CASES)
def test_mistake_is_located(
    fail: Callable[..., ConfigError],
    minimal: str,
    extra: str,
    line: int,
    path: str,
    message: str,
    hint: str | None,
) -> None:
    err = fail(minimal + extra)
    assert (err.line, err.path) == (line, path)
    assert message in err.message
    if hint is not None:
        assert err.hint is not None and hint in err.hint
    assert f"line {line}, {path}" in str(err)


FEATURE_CASES = [
    ("  - name: z\n    type: numbr\n", 8, "input_features[1].type", "numbr", "number"),
    (
        "  - name: z\n    typ: number\n",
        7,
        "input_features[1]",
        "missing required key 'type'",
        "typ",
    ),
    ("  - type: number\n", 7, "input_features[1]", "missing required key 'name'", None),
    (
        "  - name: z\n    type: number\n    encoder:\n      type: bert\n",
        10,
        "input_features[1].encoder.type",
        "unknown encoder 'bert'",
        "dense",
    ),
    (
        "  - name: z\n    type: number\n    preprocessing:\n      normalization: z-score\n",
        10,
        "input_features[1].preprocessing.normalization",
        "z-score",
        "zscore",
    ),
    (
        "  - name: z\n    type: category\n    preprocessing:\n"
        "      missing_value_strategy: fill_with_mean\n",
        10,
        "input_features[1].preprocessing.missing_value_strategy",
        "fill_with_mean",
        None,
    ),
    ("  - just a string\n", 7, "input_features[1]", "must be a mapping", None),
]


@pytest.mark.parametrize(("feature", "line", "path", "message", "hint"), FEATURE_CASES)
def test_feature_mistake_is_located(
    fail: Callable[..., ConfigError],
    feature: str,
    line: int,
    path: str,
    message: str,
    hint: str | None,
) -> None:
    text = (
        "output_features:\n  - name: y\n    type: binary\n"
        "input_features:\n  - name: x\n    type: number\n" + feature
    )
    err = fail(text)
    assert (err.line, err.path) == (line, path)
    assert any(message in e.message for e in err.errors)
    if hint is not None:
        assert err.hint is not None and hint in err.hint


def test_misspelt_required_key_is_one_problem_with_the_fix(
    fail: Callable[..., ConfigError],
) -> None:
    err = fail(
        "input_features:\n  - name: x\n    typ: number\n"
        "output_features:\n  - {name: y, type: binary}\n"
    )
    assert [(e.line, e.path, e.hint) for e in err.errors] == [
        (2, "input_features[0]", "is 'typ' a misspelling of 'type'?"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "path", "hint"),
    [
        (
            "input_feature:\n  - {name: x, type: number}\n"
            "output_features:\n  - {name: y, type: binary}\n",
            1,
            "input_feature",
            "did you mean 'input_features'?",
        ),
        (
            "input_features:\n  - {name: x, type: number}\n"
            "outputfeatures:\n  - {name: y, type: binary}\n",
            3,
            "outputfeatures",
            "did you mean 'output_features'?",
        ),
    ],
)
def test_a_misspelt_required_section_is_located_with_did_you_mean(
    fail: Callable[..., ConfigError], text: str, line: int, path: str, hint: str
) -> None:
    err = fail(text)
    assert [(e.line, e.path, e.hint) for e in err.errors] == [(line, path, hint)]
    assert "is not a Ludwig section, and" in err.message


# ------------------------------------ what Ludwig accepts and ignores, or upgrades: warnings
WARN_CASES = [
    # (appended YAML, line, path, words in message, words in hint)
    ("trainr:\n  epochs: 3\n", 7, "trainr", "not a Ludwig section", "trainer"),
    ("training:\n  epochs: 3\n", 7, "training", "'training' section is now 'trainer'", "trainer"),
    (
        "trainer:\n  optimizer:\n    type: sgd\n    momentun: 0.9\n",
        10,
        "trainer.optimizer.momentun",
        "Ludwig ignores it",
        "momentum",
    ),
    (
        "combiner:\n  type: concat\n  outputsize: 3\n",
        9,
        "combiner.outputsize",
        "Ludwig ignores it",
        "output_size",
    ),
]


@pytest.mark.parametrize(("extra", "line", "path", "message", "hint"), WARN_CASES)
def test_ignored_or_upgraded_keys_warn_where_written(
    minimal: str, extra: str, line: int, path: str, message: str, hint: str
) -> None:
    with pytest.warns(ConfigWarning) as caught:
        cfg = load_config(minimal + extra)
    note = cfg.warnings[0]
    assert (note.line, note.path) == (line, path)
    assert message in note.message and note.hint is not None and hint in note.hint
    assert f"line {line}, {path}" in str(caught[0].message)


def test_training_is_upgraded_to_trainer(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(minimal + "training:\n  epochs: 3\n")
    assert cfg.trainer["epochs"] == 3 and "training" not in cfg.to_dict()


def test_a_mistake_in_an_upgraded_section_is_located_where_written(
    fail: Callable[..., ConfigError], minimal: str
) -> None:
    err = fail(minimal + "training:\n  epochs: 0\n")
    assert (err.line, err.path) == (8, "trainer.epochs")


def test_an_ignored_key_is_dropped_from_the_render(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(minimal + "combiner:\n  type: concat\n  outputsize: 3\n")
    assert "outputsize" not in cfg.combiner and cfg.combiner["output_size"] == 256


def test_warnings_follow_the_line_offset(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(minimal + "trainr: {}\n", line_offset=1)
    assert cfg.warnings[0].line == 8


def test_missing_sections_have_no_line(fail: Callable[..., ConfigError]) -> None:
    err = fail("trainer:\n  epochs: 3\n")
    assert [(e.path, e.line) for e in err.errors] == [
        ("input_features", None),
        ("output_features", None),
    ]


def test_empty_feature_list_is_located(fail: Callable[..., ConfigError], minimal: str) -> None:
    err = fail("input_features: []\noutput_features:\n  - {name: y, type: binary}\n")
    assert (err.line, err.path) == (1, "input_features")
    assert "empty" in err.message


def test_three_mistakes_report_three(fail: Callable[..., ConfigError], minimal: str) -> None:
    err = fail(minimal + "trainer:\n  epochs: 0\n  batch_sze: 4\n  optimizer: {type: adamz}\n")
    assert [(e.line, e.path) for e in err.errors] == [
        (8, "trainer.epochs"),
        (9, "trainer.batch_sze"),
        (10, "trainer.optimizer.type"),
    ]
    assert str(err).startswith("3 problems in the config:")


def test_error_message_is_short_and_has_no_schema_dump(
    fail: Callable[..., ConfigError], minimal: str
) -> None:
    text = str(fail(minimal + "trainer:\n  batch_sze: 8\n"))
    assert "Traceback" not in text
    assert len(text.splitlines()) == 4
    assert "    batch_sze: 8" in text
    assert text.splitlines()[2] == "      ^"


def test_returns_a_config(minimal: str) -> None:
    assert isinstance(load_config(minimal), Config)


def test_old_flat_encoder_parameters_are_nested_with_a_note() -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(
            "input_features:\n  - name: t\n    type: text\n    encoder: rnn\n    cell_type: lstm\n"
            "output_features:\n  - name: y\n    type: category\n    num_fc_layers: 2\n",
        )
    notes = [(n.line, n.path, n.message) for n in cfg.warnings]
    assert (
        5,
        "input_features[0].cell_type",
        "old syntax upgraded: 'cell_type' is now an encoder parameter",
    ) in notes
    assert (
        9,
        "output_features[0].num_fc_layers",
        "old syntax upgraded: 'num_fc_layers' is now a decoder parameter",
    ) in notes
    encoder = cfg.input_features[0]["encoder"]
    assert (encoder["type"], encoder["cell_type"]) == ("rnn", "lstm")
    assert cfg.output_features[0]["decoder"]["num_fc_layers"] == 2


def test_old_split_options_are_upgraded_with_what_to_write(minimal: str) -> None:
    with pytest.warns(ConfigWarning):
        cfg = load_config(minimal + "preprocessing:\n  split_probabilities: [0.8, 0.1, 0.1]\n")
    note = cfg.warnings[0]
    assert (note.line, note.path) == (8, "preprocessing.split_probabilities")
    assert note.hint == "write split: {type: random, probabilities: [...]}"
    assert cfg.preprocessing["split"] == {"type": "random", "probabilities": [0.8, 0.1, 0.1]}


def test_a_config_that_says_it_is_current_is_not_upgraded(
    fail: Callable[..., ConfigError], minimal: str
) -> None:
    with pytest.warns(ConfigWarning) as caught:
        load_config(minimal + "ludwig_version: 0.11.0\ntraining:\n  epochs: 3\n")
    assert "not a Ludwig section" in str(caught[0].message)
