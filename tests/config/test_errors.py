"""ConfigError: attributes, the short message, shifting lines, collecting, pickling."""

from __future__ import annotations

import pickle

import pytest

from ludwig_nb.config.errors import MAX_LISTED, ConfigError, UnsupportedByEngine


def _one(line: int | None = 3) -> ConfigError:
    return ConfigError(
        "unknown key 'batch_sze'",
        line=line,
        column=3,
        path="trainer.batch_sze",
        hint="did you mean 'batch_size'?",
        source_line="  batch_sze: 8",
    )


def test_is_a_value_error_and_lists_itself() -> None:
    err = _one()
    assert isinstance(err, ValueError)
    assert err.errors == [err]


def test_str_has_line_path_caret_and_hint() -> None:
    assert str(_one()) == (
        "line 3, trainer.batch_sze: unknown key 'batch_sze'\n"
        "      batch_sze: 8\n"
        "      ^\n"
        "  did you mean 'batch_size'?"
    )


def test_str_without_position_has_no_caret() -> None:
    err = ConfigError("output_features is missing", path="output_features")
    assert str(err) == "output_features: output_features is missing"


def test_collect_keeps_every_problem_and_the_first_location() -> None:
    problems = [_one(3), ConfigError("bad", line=7, path="a")]
    err = ConfigError.collect(problems)
    assert err.errors == problems
    assert (err.line, err.path) == (3, "trainer.batch_sze")
    text = str(err)
    assert text.startswith("2 problems in the config:")
    assert "line 7, a: bad" in text


def test_collect_of_one_is_that_one() -> None:
    err = _one()
    assert ConfigError.collect([err]) is err


def test_collect_needs_a_problem() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ConfigError.collect([])


def test_long_lists_are_cut() -> None:
    err = ConfigError.collect([ConfigError(f"p{i}", line=i + 1) for i in range(MAX_LISTED + 3)])
    assert str(err).endswith("... and 3 more")


def test_only_unsupported_problems_make_an_unsupported_error() -> None:
    a = UnsupportedByEngine("image", line=2, engine="ludwig")
    b = UnsupportedByEngine("lbfgs", line=9, engine="ludwig")
    both = ConfigError.collect([a, b])
    assert isinstance(both, UnsupportedByEngine)
    assert both.engine == "ludwig"
    mixed = ConfigError.collect([a, _one()])
    assert not isinstance(mixed, UnsupportedByEngine)


def test_shifted_moves_every_line_and_leaves_the_original() -> None:
    err = ConfigError.collect([_one(3), ConfigError("missing", path="output_features")])
    moved = err.shifted(1)
    assert [e.line for e in moved.errors] == [4, None]
    assert moved.line == 4
    assert [e.line for e in err.errors] == [3, None]


def test_shifted_single_error_keeps_its_kind() -> None:
    moved = UnsupportedByEngine("image", line=2, engine="ludwig").shifted(1)
    assert isinstance(moved, UnsupportedByEngine)
    assert (moved.line, moved.engine, moved.errors) == (3, "ludwig", [moved])


def test_pickles() -> None:
    err = ConfigError.collect([_one(), UnsupportedByEngine("x", line=1)])
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err)
    assert [e.line for e in back.errors] == [e.line for e in err.errors]


def test_no_traceback_in_message() -> None:
    assert "Traceback" not in str(_one())
