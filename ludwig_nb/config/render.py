"""Validate a whole document and render it: every section and default filled in.

``render(data, ctx)`` walks the top level, the features (with ``defaults`` applied), the
combiner, trainer, preprocessing and our ``gpu_watch``; problems go to ``ctx``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.gpu_watch import check_gpu_watch
from ludwig_nb.config.schema.combiners import combiner_section
from ludwig_nb.config.schema.features import (
    FEATURE_TYPES,
    check_defaults,
    check_feature,
)
from ludwig_nb.config.schema.fields import Ctx, FreeDict, Param, allowed_hint, suggest
from ludwig_nb.config.schema.preprocessing import global_preprocessing
from ludwig_nb.config.schema.trainer import trainer_section

__all__ = ["LUDWIG_VERSION", "TOP_LEVEL_KEYS", "render"]

#: the Ludwig release whose schema this package follows
LUDWIG_VERSION = "0.11.0"
TOP_LEVEL_KEYS = (
    "model_type",
    "input_features",
    "output_features",
    "combiner",
    "trainer",
    "preprocessing",
    "defaults",
    "hyperopt",
    "backend",
    "ludwig_version",
    "gpu_watch",
)
_RENAMED = {"training": "trainer"}  # Ludwig < 0.5 names


def render(data: Mapping[str, Any], ctx: Ctx) -> dict[str, Any]:
    """The rendered config; check ``ctx.problems`` before trusting it."""
    model_type = Param("ecd", choices=("ecd", "llm")).check(
        data.get("model_type", "ecd"), ("model_type",), ctx
    )
    if model_type == "llm":
        # a different schema altogether: kept as written for the Ludwig engine to judge
        kept = {k: copy.deepcopy(v) for k, v in data.items() if k != "gpu_watch"}
        kept["gpu_watch"] = check_gpu_watch(data.get("gpu_watch"), ("gpu_watch",), ctx)
        return kept
    _check_top_keys(data, ctx)
    written_defaults, rendered_defaults = check_defaults(data.get("defaults"), ("defaults",), ctx)
    out: dict[str, Any] = {"model_type": "ecd"}
    for side in ("input_features", "output_features"):
        out[side] = _features(data, side, ctx, written_defaults)
    out["combiner"] = combiner_section().check(data.get("combiner"), ("combiner",), ctx)
    out["trainer"] = trainer_section().check(data.get("trainer"), ("trainer",), ctx)
    out["preprocessing"] = _preprocessing(data.get("preprocessing"), ctx)
    out["defaults"] = rendered_defaults
    out["hyperopt"] = FreeDict().check(data.get("hyperopt"), ("hyperopt",), ctx)
    out["backend"] = FreeDict().check(data.get("backend"), ("backend",), ctx)
    out["ludwig_version"] = Param(LUDWIG_VERSION, "str").check(
        data.get("ludwig_version", LUDWIG_VERSION), ("ludwig_version",), ctx
    )
    out["gpu_watch"] = check_gpu_watch(data.get("gpu_watch"), ("gpu_watch",), ctx)
    return out


def _check_top_keys(data: Mapping[str, Any], ctx: Ctx) -> None:
    for key in data:
        if key in TOP_LEVEL_KEYS:
            continue
        hint = (
            f"'{key}' is the old name of '{_RENAMED[key]}'"
            if key in _RENAMED
            else suggest(str(key), TOP_LEVEL_KEYS) or allowed_hint(TOP_LEVEL_KEYS)
        )
        ctx.problem((key,), f"unknown top-level key '{key}'", hint=hint, key=True)


def _features(
    data: Mapping[str, Any], side: str, ctx: Ctx, defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    raw = data.get(side)
    if raw is None:
        where = "missing" if side not in data else "empty"
        ctx.problem(
            (side,),
            f"{side} is {where}: the config needs at least one",
            hint=f"e.g. {side}: [{{name: my_column, type: number}}]",
        )
        return []
    if not isinstance(raw, list):
        ctx.problem((side,), f"{side} must be a list of features (each '- name: ... type: ...')")
        return []
    if not raw:
        ctx.problem((side,), f"{side} is empty: the config needs at least one")
        return []
    output = side == "output_features"
    rendered = (
        check_feature(item, (side, i), ctx, output=output, defaults=defaults)
        for i, item in enumerate(raw)
    )
    return [f for f in rendered if f is not None]


_OLD_SPLIT_KEYS = {
    "split_probabilities": "split: {type: random, probabilities: [...]}",
    "stratify": "split: {type: stratify, column: ...}",
    "force_split": "split: {type: fixed, column: split}",
}


def _preprocessing(raw: Any, ctx: Ctx) -> Any:
    if isinstance(raw, Mapping):
        for key in [k for k in raw if k in _OLD_SPLIT_KEYS]:  # Ludwig < 0.6 split options
            ctx.problem(
                ("preprocessing", key),
                f"'{key}' is an old split option",
                hint=f"write {_OLD_SPLIT_KEYS[key]}",
                key=True,
            )
        raw = {k: v for k, v in raw.items() if k not in _OLD_SPLIT_KEYS}
        moved = [k for k in raw if k in FEATURE_TYPES]
        for key in moved:  # Ludwig < 0.6 kept per-type preprocessing here
            ctx.problem(
                ("preprocessing", key),
                f"per-type preprocessing '{key}' belongs in defaults",
                hint=f"move it to defaults.{key}.preprocessing",
                key=True,
            )
        raw = {k: v for k, v in raw.items() if k not in moved}
    return global_preprocessing().check(raw, ("preprocessing",), ctx)
