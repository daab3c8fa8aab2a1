"""YAML parsing with positions: every key and value located, structural mistakes caught."""

from __future__ import annotations

import pytest

from ludwig_nb.config.errors import ConfigError
from ludwig_nb.config.yaml_positions import format_path, parse_yaml

DOC = """\
trainer:
  epochs: 3
input_features:
  - name: a
    type: number
  - {name: b, type: text}
"""


def test_positions_of_keys_and_values_are_one_based() -> None:
    located = parse_yaml(DOC)
    assert located.data["trainer"] == {"epochs": 3}
    assert located.positions.keys[("trainer", "epochs")] == (2, 3)
    assert located.positions.values[("trainer", "epochs")] == (2, 11)
    assert located.positions.values[("input_features", 1, "type")] == (6, 21)
    assert located.positions.keys[("input_features", 0, "type")] == (5, 5)


def test_locate_falls_back_to_the_nearest_written_parent_but_not_the_root() -> None:
    positions = parse_yaml(DOC).positions
    assert positions.locate(("trainer", "batch_size")) == (1, 1)
    assert positions.locate(("input_features", 0, "encoder")) == (4, 5)
    assert positions.locate(("output_features",)) is None


def test_a_block_section_is_located_at_its_key_a_flow_one_at_its_value() -> None:
    positions = parse_yaml(DOC).positions
    assert positions.values[("input_features",)] == (3, 1)
    assert positions.values[("input_features", 1)] == (6, 5)


def test_exponent_floats_without_a_dot_are_numbers() -> None:
    assert parse_yaml("lr: 1e-4\nb: 2.5E3\n").data == {"lr": 1e-4, "b": 2500.0}


def test_merge_keys_are_resolved() -> None:
    data = parse_yaml("base: &b {epochs: 2}\ntrainer:\n  <<: *b\n  batch_size: 8\n").data
    assert data["trainer"] == {"epochs": 2, "batch_size": 8}


def test_duplicate_key_is_reported_at_the_second_one() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("trainer:\n  epochs: 1\n  epochs: 2\n")
    err = info.value
    assert (err.line, err.column, err.path) == (3, 3, "trainer.epochs")
    assert "first on line 2" in err.message


def test_duplicate_keys_are_all_reported() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("a: 1\na: 2\nb:\n  c: 1\n  c: 2\n")
    assert [(e.line, e.path) for e in info.value.errors] == [(2, "a"), (5, "b.c")]


def test_tab_in_indentation() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("trainer:\n\tepochs: 1\n")
    assert (info.value.line, info.value.column) == (2, 1)
    assert "tab" in info.value.message


def test_tab_inside_a_value_is_fine() -> None:
    assert parse_yaml("a: 'x\ty'\n").data == {"a": "x\ty"}


def test_syntax_error_has_a_position() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("trainer:\n  epochs: [1, 2\n  batch_size: 3\n")
    err = info.value
    assert err.message.startswith("YAML syntax error")
    assert err.line is not None and 2 <= err.line <= 3


def test_unclosed_flow_at_end_points_at_the_last_line() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("a: 1\nb: [")
    assert info.value.line == 2


@pytest.mark.parametrize("text", ["", "   \n", "# just a comment\n", "~\n", "null"])
def test_empty_document(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(text)
    assert "empty" in info.value.message
    assert info.value.line is None


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "list"), ("42\n", "single value")])
def test_document_that_is_not_a_mapping(text: str, kind: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(text)
    assert kind in info.value.message
    assert info.value.line == 1


def test_complex_key_is_rejected_with_position() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("? [a, b]\n: 1\n")
    assert info.value.line == 1
    assert "plain name" in info.value.message


def test_two_documents_are_a_syntax_error() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("a: 1\n---\nb: 2\n")
    assert info.value.line == 2


def test_format_path() -> None:
    assert format_path(("input_features", 2, "encoder", "type")) == (
        "input_features[2].encoder.type"
    )
    assert format_path(()) == ""


def test_pure_python_parser_gives_the_same_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libyaml the pure-Python loader is used; positions and errors must match."""
    import importlib

    import yaml

    from ludwig_nb.config import yaml_positions

    fast = yaml_positions.parse_yaml(DOC).positions
    monkeypatch.delattr(yaml, "CSafeLoader")
    slow_module = importlib.reload(yaml_positions)
    try:
        assert slow_module._Loader.__mro__[1] is yaml.SafeLoader
        slow = slow_module.parse_yaml(DOC).positions
        assert (slow.keys, slow.values) == (fast.keys, fast.values)
        with pytest.raises(ConfigError) as info:
            slow_module.parse_yaml("a: 1\nb: [")
        assert info.value.line == 2
    finally:
        monkeypatch.undo()
        importlib.reload(yaml_positions)
