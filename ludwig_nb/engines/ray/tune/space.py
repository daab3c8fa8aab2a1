"""Ludwig's search spaces as Ray Tune domains, and values between the two.

A choice or grid of mappings or lists travels through Tune as the index of the value (Tune's
variant generator would otherwise expand a nested value as a space of its own); anything
else travels as itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["decode", "domain", "encode"]

_PRIMITIVE = (type(None), bool, int, float, str)


def _indexed(values: list[Any]) -> bool:
    return not all(isinstance(v, _PRIMITIVE) for v in values)


def _choices(spec: dict[str, Any]) -> list[Any]:
    return list(spec.get("categories", spec.get("values")) or [])


def domain(spec: dict[str, Any]) -> Any:
    """A Ludwig space (one rendered ``hyperopt.parameters`` entry) as a Tune domain."""
    from ray import tune

    space = spec["space"]
    if space in ("choice", "grid_search"):
        values = _choices(spec)
        return tune.choice(list(range(len(values))) if _indexed(values) else values)
    lo, hi, q = spec.get("lower", 0), spec.get("upper", 1), spec.get("q", 1)
    # a log-uniform draw does not depend on the log's base (Ray 2.60 deprecates passing it)
    makers: dict[str, Callable[[], Any]] = {
        "uniform": lambda: tune.uniform(lo, hi),
        "quniform": lambda: tune.quniform(lo, hi, q),
        "loguniform": lambda: tune.loguniform(lo, hi),
        "qloguniform": lambda: tune.qloguniform(lo, hi, q),
        "randint": lambda: tune.randint(int(lo), int(hi)),
        "qrandint": lambda: tune.qrandint(int(lo), int(hi), int(q)),
        "lograndint": lambda: tune.lograndint(int(lo), int(hi)),
        "qlograndint": lambda: tune.qlograndint(int(lo), int(hi), int(q)),
        "randn": lambda: tune.randn(spec.get("mean", 0.0), spec.get("sd", 1.0)),
        "qrandn": lambda: tune.qrandn(spec.get("mean", 0.0), spec.get("sd", 1.0), q),
    }
    return makers[space]()


def decode(parameters: dict[str, dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """Tune's sampled values -> the values written into the trial's config."""
    out = {}
    for name, value in values.items():
        spec = parameters.get(name)
        if spec is None:
            continue
        if spec["space"] in ("choice", "grid_search"):
            choices = _choices(spec)
            out[name] = choices[int(value)] if _indexed(choices) else value
        else:
            out[name] = value.item() if hasattr(value, "item") else value
    return out


def encode(parameters: dict[str, dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """Config values -> Tune's (for points to run first and finished trials)."""
    out = {}
    for name, value in values.items():
        spec = parameters.get(name)
        if spec is None:
            continue
        choices = _choices(spec)
        indexed = spec["space"] in ("choice", "grid_search") and _indexed(choices)
        out[name] = choices.index(value) if indexed else value
    return out
