"""The values a search may give a parameter, checked as the config schema checks them.

A ``choice`` or ``grid_search`` lists the values its trials will write into the config, and a
range (``uniform``, ``randint``, ...) has its two ends: each one is put into the config and the
config is checked again, so that ``batch_size: [16, -4]`` or ``fill_value: [1.0, .nan]`` is
refused at the value's line before anything starts, not by one trial after the others ran.

A problem another parameter's value could cause or mend (a key that only another encoder type
has) is left to the trial: only what is wrong with the value itself is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ludwig_nb.config.schema.fields import Ctx
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = ["check_values"]

#: spaces whose values are drawn as whole numbers (the rest draw fractions)
_WHOLE = ("randint", "qrandint", "lograndint", "qlograndint")
#: problems that depend on the other parameters' values, not on this one's
_INTERACTING = ("unknown key", "missing required key")
#: at most this many values of one parameter are checked (a grid of thousands: the first ones)
MAX_CHECKED = 64


#: ``apply(config, {parameter: value}, rendered)`` -> the trial's config
Apply = Callable[[dict[str, Any], dict[str, object], dict[str, Any]], dict[str, Any]]


def check_values(
    cfg: dict[str, Any],
    parameters: dict[str, Any],
    ctx: Ctx,
    apply: Apply,
    rendered: dict[str, Any] | None = None,
) -> None:
    """Check every value the search may write for each parameter; problems go into ``ctx``.

    Args:
        cfg: the config as written (its own problems already reported).
        parameters: ``hyperopt.parameters`` (its spaces already checked).
        ctx: where each problem goes, located at the value (or the range end) that causes it.
        apply: how a trial's value goes into the config (``hyperopt.apply_parameters``).
        rendered: the rendered config (the types of blocks a value creates); default ``cfg``.
    """
    rendered = cfg if rendered is None else rendered
    for name, spec in parameters.items():
        base: KeyPath = ("hyperopt", "parameters", name)
        found = False
        for where, value, drawn in _values(spec):
            if drawn and found:
                break  # a value drawn between two ends already refused says nothing new
            for problem in _problems_of(apply(cfg, {name: value}, rendered)):
                found = True
                text = f"a trial with {_shown(value)} would be refused: {problem}"
                if drawn:
                    text = f"space {spec['space']} draws values such as {_shown(value)}: {problem}"
                ctx.problem((*base, *where), text, hint=_hint(spec, drawn))


def _values(spec: dict[str, Any]) -> list[tuple[KeyPath, object, bool]]:
    """``(where in the space, value, drawn)`` for each value to check.

    ``drawn``: a value a range draws between its ends, not one written.
    """
    space = spec["space"]
    if space in ("choice", "grid_search"):
        key = "categories" if space == "choice" else "values"
        return [(((key, i)), v, False) for i, v in enumerate(spec[key][:MAX_CHECKED])]
    if "lower" not in spec:  # randn, qrandn: unbounded, nothing to check
        return []
    lower, upper = spec["lower"], spec["upper"]
    if space in _WHOLE:
        top = upper - 1 if space in ("randint", "lograndint") else upper  # as Ray Tune
        return [(("lower",), int(lower), False), (("upper",), int(max(lower, top)), False)]
    out: list[tuple[KeyPath, object, bool]] = [
        (("lower",), float(lower), False),
        (("upper",), float(upper), False),
    ]
    inside = _fraction_between(float(lower), float(upper))
    if inside is not None and "q" not in spec:
        out.append((("space",), inside, True))
    return out


def _fraction_between(lower: float, upper: float) -> float | None:
    """A value strictly between the ends that is not a whole number (None: none nearby)."""
    middle = lower + (upper - lower) * 0.37
    if not (lower < middle < upper) or not math.isfinite(middle):
        return None
    return middle + 0.25 if middle.is_integer() and middle + 0.25 < upper else middle


def _problems_of(trial: dict[str, Any]) -> list[str]:
    """What the schema says of a trial's config (``path message`` each)."""
    from ludwig_nb.config.cross_checks import check_across
    from ludwig_nb.config.render import render

    scratch = Ctx()
    try:
        check_across(render(trial, scratch), scratch)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a shape render cannot take
        return [f"the config unusable ({exc})"]
    return [
        f"{p.path} {p.message}" if p.path else p.message
        for p in scratch.problems
        if not p.message.startswith(_INTERACTING)
    ]


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, float) else f"{value:g}"
    return text if len(text) <= 60 else text[:57] + "..."


def _hint(spec: dict[str, Any], drawn: bool) -> str:
    if drawn:
        return "use a space that draws whole numbers (randint, qrandint) or a choice"
    if spec["space"] in ("choice", "grid_search"):
        return "remove or correct that value; every trial's config is checked like a config"
    return "move the range's end inside what the parameter accepts"
