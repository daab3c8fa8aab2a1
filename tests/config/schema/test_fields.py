"""The spec language: scalars, lists, sections, variants; problems collected, not raised."""

from __future__ import annotations

import math

import pytest

from ludwig_nb.config.schema.fields import MISSING, Ctx, ListOf, Param, Section


def _messages(ctx: Ctx) -> list[str]:
    return [p.message for p in ctx.problems]


@pytest.mark.parametrize(
    ("spec", "value", "expected", "problem"),
    [
        (Param(1, "int", ge=1), 3, 3, None),
        (Param(1, "int", ge=1), 0, 0, "must be >= 1, got 0"),
        (Param(1, "int"), 4.0, 4, None),
        (Param(1, "int"), 4.5, 4.5, "must be an integer, not a number"),
        (Param(1, "int"), True, True, "must be an integer, not a boolean"),
        (Param(1.0, "float", gt=0.0), 0, 0, "must be > 0, got 0"),
        (Param(1.0, "float", le=1.0), math.nan, math.nan, "must be a number, not NaN"),
        (Param(1.0, "float", lt=1.0), 1.0, 1.0, "must be < 1, got 1"),
        (Param("auto", "int", literals=("auto",)), "auto", "auto", None),
        (Param(None, "int", "null"), None, None, None),
        (Param(3, "int"), None, 3, "must be an integer, not null"),
        (Param("a", choices=("a", "b")), "c", "c", "unknown value 'c'"),
        (Param(False, "bool"), "yes", "yes", "must be true or false, not the string 'yes'"),
    ],
)
def test_param(spec: Param, value: object, expected: object, problem: str | None) -> None:
    ctx = Ctx()
    got = spec.check(value, ("k",), ctx)
    same_nan = isinstance(got, float) and math.isnan(got) and math.isnan(expected)  # type: ignore[arg-type]
    assert got == expected or same_nan
    assert _messages(ctx) == ([problem] if problem else [])


def test_enum_hint_suggests_or_lists() -> None:
    ctx = Ctx()
    spec = Param("relu", choices=("relu", "tanh"))
    spec.check("reluu", ("a",), ctx)
    spec.check("zzz", ("b",), ctx)
    assert [p.hint for p in ctx.problems] == ["did you mean 'relu'?", "allowed: relu, tanh"]


def test_list_length_and_items() -> None:
    ctx = Ctx()
    spec = ListOf(Param(0.0, "float", ge=0.0), [0.5, 0.5], nullable=False, length=2)
    assert spec.check([1, -1], ("p",), ctx) == [1, -1]
    assert spec.check(None, ("q",), ctx) is None
    assert [p.path for p in ctx.problems] == ["p[1]", "q"]
    assert spec.default() == [0.5, 0.5] and spec.default() is not spec.default()


def test_section_fills_defaults_and_reports_unknown_and_missing() -> None:
    ctx = Ctx()
    spec = Section({"name": Param(MISSING, "str"), "size": Param(8, "int")})
    assert spec.check({"sise": 3}, ("s",), ctx) == {"size": 8}
    assert [(p.path, p.message, p.hint) for p in ctx.problems] == [
        ("s", "missing required key 'name'", None),
        ("s.sise", "unknown key 'sise'", "did you mean 'size'?"),
    ]
    assert spec.default() == {"size": 8}


def test_muted_paths_drop_problems_only_inside() -> None:
    ctx = Ctx()
    with ctx.muted([("a", "b")]):
        ctx.problem(("a", "b", "c"), "hidden")
        ctx.problem(("a", "x"), "shown")
    ctx.problem(("a", "b"), "shown after")
    assert _messages(ctx) == ["shown", "shown after"]
