"""Checks that span sections of a rendered config, and the validation field/metric it implies.

Runs on the rendered dict (so every key exists) and reports at the keys the user wrote.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from ludwig_nb.config.ludwig_checks import check_like_ludwig
from ludwig_nb.config.schema.features import OUTPUT_METRICS
from ludwig_nb.config.schema.fields import Ctx, allowed_hint, suggest

__all__ = ["check_across"]


def check_across(cfg: dict[str, Any], ctx: Ctx) -> None:
    """Cross-field checks.

    Also fills ``trainer.validation_field``/``validation_metric`` the way Ludwig does (the first
    output feature and its default validation metric; with only a metric given, the first output
    feature that has it).
    """
    check_like_ludwig(cfg, ctx)
    if cfg.get("model_type") != "ecd":
        return
    _unique_names(cfg, ctx)
    _references(cfg, ctx)
    trainer = cfg["trainer"]
    if _positive(trainer.get("checkpoints_per_epoch")) and _positive(
        trainer.get("steps_per_checkpoint")
    ):
        ctx.problem(
            ("trainer", "checkpoints_per_epoch"),
            "checkpoints_per_epoch and steps_per_checkpoint cannot both be set",
            hint="keep one of them (the other at 0)",
        )
    _batch_sizes(trainer, ctx)
    _attention_heads(cfg, ctx)
    _split(cfg["preprocessing"], ctx)
    _validation(cfg, ctx)


def _positive(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _named(cfg: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    return [
        (side, i, f)
        for side in ("input_features", "output_features")
        for i, f in enumerate(cfg[side])
        if isinstance(f.get("name"), str)
    ]


def _unique_names(cfg: dict[str, object], ctx: Ctx) -> None:
    seen: dict[str, str] = {}
    for side, i, feature in _named(cfg):
        name = feature["name"]
        here = f"{side}[{i}]"
        if name in seen:
            ctx.problem(
                (side, i, "name"),
                f"feature name '{name}' is already used by {seen[name]}",
                hint="feature names must be unique",
            )
        else:
            seen[name] = here


def _references(cfg: dict[str, Any], ctx: Ctx) -> None:
    inputs = {f["name"]: f for f in cfg["input_features"] if isinstance(f.get("name"), str)}
    outputs = [f["name"] for f in cfg["output_features"] if isinstance(f.get("name"), str)]
    for i, feature in enumerate(cfg["input_features"]):
        tied = feature.get("tied")
        if not isinstance(tied, str):
            continue
        other = inputs.get(tied)
        if other is None or tied == feature.get("name"):
            ctx.problem(
                ("input_features", i, "tied"),
                f"no other input feature named '{tied}'",
                hint=suggest(tied, inputs),
            )
        elif other.get("type") != feature.get("type"):
            ctx.problem(
                ("input_features", i, "tied"),
                f"cannot tie to '{tied}': it is a "
                f"{other.get('type')} feature, this one is {feature.get('type')}",
            )
    for i, feature in enumerate(cfg["output_features"]):
        dependencies = feature.get("dependencies")
        for j, dep in enumerate(dependencies if isinstance(dependencies, list) else []):
            if dep not in outputs or dep == feature.get("name"):
                ctx.problem(
                    ("output_features", i, "dependencies", j),
                    f"no other output feature named '{dep}'",
                    hint=suggest(str(dep), outputs),
                )


def _attention_heads(cfg: dict[str, Any], ctx: Ctx) -> None:
    """A transformer splits ``hidden_size`` over ``num_heads``: it must divide evenly."""
    places: list[tuple[tuple[Any, ...], object]] = [
        (("input_features", i, "encoder"), f.get("encoder"))
        for i, f in enumerate(cfg["input_features"])
    ]
    places.append((("combiner",), cfg.get("combiner")))
    for path, section in places:
        if not isinstance(section, dict) or section.get("type") not in (
            "transformer",
            "tabtransformer",
        ):
            continue
        hidden, heads = section.get("hidden_size"), section.get("num_heads")
        if _positive(hidden) and _positive(heads) and hidden % heads:
            fits = [n for n in range(1, min(hidden, 16) + 1) if hidden % n == 0]
            ctx.problem(
                (*path, "num_heads"),
                f"num_heads {heads} does not divide hidden_size {hidden}: each attention "
                "head gets hidden_size / num_heads dimensions",
                hint=f"use num_heads in {fits} or a hidden_size that {heads} divides",
            )


def _batch_sizes(trainer: dict[str, object], ctx: Ctx) -> None:
    batch, effective = trainer.get("batch_size"), trainer.get("effective_batch_size")
    accumulation = trainer.get("gradient_accumulation_steps")
    if not (_positive(batch) and _positive(effective)):
        return  # "auto", or a wrong value already reported
    path = ("trainer", "effective_batch_size")
    if effective < batch:
        ctx.problem(
            path, f"effective_batch_size ({effective}) is smaller than batch_size ({batch})"
        )
    elif effective % batch:
        ctx.problem(
            path, f"effective_batch_size ({effective}) is not a multiple of batch_size ({batch})"
        )
    elif _positive(accumulation) and effective != batch * accumulation:
        ctx.problem(
            path,
            f"effective_batch_size ({effective}) is not batch_size x "
            f"gradient_accumulation_steps ({batch} x {accumulation})",
            hint=f"use {batch * accumulation}, or leave one of them 'auto'",
        )


def _split(pre: dict[str, Any], ctx: Ctx) -> None:
    split = pre.get("split") or {}
    probabilities = split.get("probabilities")
    if isinstance(probabilities, list) and len(probabilities) != 3:
        # Ludwig 0.11's schema lets this through, then its splitter fails at split time
        ctx.problem(
            ("preprocessing", "split", "probabilities"),
            "split probabilities must be three (training, validation, test), "
            f"not {len(probabilities)}",
            hint="e.g. [0.7, 0.1, 0.2]; use 0 for a split you do not want",
        )
    elif isinstance(probabilities, list) and all(
        isinstance(p, int | float) and math.isfinite(p) for p in probabilities
    ):
        total = math.fsum(probabilities)
        if abs(total - 1.0) > 1e-6:
            ctx.problem(
                ("preprocessing", "split", "probabilities"),
                f"split probabilities sum to {total:g}, not 1",
                hint="e.g. [0.7, 0.1, 0.2] for training, validation, test",
            )
    if str(split.get("type")) in ("stratify", "datetime", "hash") and not split.get("column"):
        ctx.problem(("preprocessing", "split"), f"a {split['type']} split needs 'column'")
    ratio, size = pre.get("sample_ratio"), pre.get("sample_size")
    if size is not None and ratio not in (None, 1.0):
        ctx.problem(
            ("preprocessing", "sample_size"), "sample_ratio and sample_size cannot both be set"
        )


def _validation(cfg: dict[str, Any], ctx: Ctx) -> None:
    trainer = cfg["trainer"]
    outputs = [
        f
        for f in cfg["output_features"]
        if isinstance(f.get("name"), str) and str(f.get("type")) in OUTPUT_METRICS
    ]
    if not outputs:
        return
    field, metric = trainer.get("validation_field"), trainer.get("validation_metric")
    if not isinstance(field, str | None) or not isinstance(metric, str | None):
        return  # already reported as a wrong type
    names = [f["name"] for f in outputs]
    if field is None:
        field = _field_for(metric, outputs, ctx)
        if field is None:
            return
    if field == "combined":
        allowed: tuple[str, ...] = ("loss",)
    elif field in names:
        allowed = OUTPUT_METRICS[outputs[names.index(field)]["type"]]
    else:
        ctx.problem(
            ("trainer", "validation_field"),
            f"no output feature named '{field}'",
            hint=suggest(str(field), [*names, "combined"]) or allowed_hint([*names, "combined"]),
        )
        return
    if metric is None:
        metric = (
            "loss"
            if field == "combined"
            else (outputs[names.index(field)]["default_validation_metric"])
        )
    elif metric not in allowed:
        ctx.problem(
            ("trainer", "validation_metric"),
            f"'{metric}' is not a metric of validation field '{field}'",
            hint=suggest(str(metric), allowed) or allowed_hint(allowed),
        )
        return
    trainer["validation_field"], trainer["validation_metric"] = field, metric


def _field_for(metric: object, outputs: list[dict[str, Any]], ctx: Ctx) -> str | None:
    if metric is None:
        return str(outputs[0]["name"])
    for feature in outputs:
        if metric in OUTPUT_METRICS[feature["type"]]:
            return str(feature["name"])
    every = sorted({m for f in outputs for m in OUTPUT_METRICS[f["type"]]})
    ctx.problem(
        ("trainer", "validation_metric"),
        f"'{metric}' is not a metric of any output feature",
        hint=suggest(str(metric), every) or allowed_hint(every),
    )
    return None
