"""Input and output features: their types, common keys, and how ``defaults`` apply to them."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.decoders import DECODERS, LOSSES
from ludwig_nb.config.schema.encoders import ENCODERS
from ludwig_nb.config.schema.fields import (
    MISSING,
    Ctx,
    ListOf,
    Param,
    Section,
    Spec,
    allowed_hint,
    suggest,
)
from ludwig_nb.config.schema.preprocessing import feature_preprocessing
from ludwig_nb.config.schema.variants import Loose, Variants
from ludwig_nb.config.yaml_positions import KeyPath

__all__ = [
    "DEFAULT_VALIDATION_METRIC",
    "FEATURE_TYPES",
    "INPUT_ONLY_TYPES",
    "OUTPUT_METRICS",
    "OUTPUT_TYPES",
    "check_defaults",
    "check_feature",
]

FEATURE_TYPES = (
    "audio",
    "bag",
    "binary",
    "category",
    "date",
    "h3",
    "image",
    "number",
    "sequence",
    "set",
    "text",
    "timeseries",
    "vector",
)
OUTPUT_TYPES = (
    "binary",
    "category",
    "category_distribution",
    "number",
    "set",
    "sequence",
    "text",
    "vector",
    "timeseries",
    "image",
)
INPUT_ONLY_TYPES = ("audio", "bag", "date", "h3")

_REGRESSION_METRICS = (
    "loss",
    "mean_squared_error",
    "mean_absolute_error",
    "root_mean_squared_error",
    "root_mean_squared_percentage_error",
    "r2",
    "mean_absolute_percentage_error",
)
_SEQUENCE_METRICS = (
    "loss",
    "token_accuracy",
    "sequence_accuracy",
    "last_accuracy",
    "perplexity",
    "char_error_rate",
    "edit_distance",
    "bleu",
)

#: output type -> the metrics ``trainer.validation_metric`` may name for it
OUTPUT_METRICS: dict[str, tuple[str, ...]] = {
    "binary": ("loss", "accuracy", "precision", "recall", "roc_auc", "specificity", "f1"),
    "category": (
        "loss",
        "accuracy",
        "accuracy_micro",
        "hits_at_k",
        "roc_auc",
        "precision",
        "recall",
        "f1",
    ),
    "category_distribution": ("loss", "accuracy", "accuracy_micro", "hits_at_k"),
    "number": _REGRESSION_METRICS,
    "set": ("loss", "jaccard"),
    "vector": ("loss", "mean_squared_error", "mean_absolute_error", "r2"),
    "timeseries": _REGRESSION_METRICS,
    "sequence": _SEQUENCE_METRICS,
    "text": _SEQUENCE_METRICS,
    "image": ("loss",),
}
DEFAULT_VALIDATION_METRIC = {
    "binary": "roc_auc",
    "category": "accuracy",
    "category_distribution": "accuracy",
    "number": "mean_squared_error",
    "set": "jaccard",
    "vector": "mean_squared_error",
    "timeseries": "mean_squared_error",
    "sequence": "loss",
    "text": "loss",
    "image": "loss",
}

_NAME = Param(MISSING, "str")
_COMMON_IN: dict[str, Spec] = {
    "name": _NAME,
    "type": Param(MISSING, choices=FEATURE_TYPES),
    "column": Param(None, "str", "null"),
    "active": Param(True, "bool"),
    "tied": Param(None, "str", "null"),
}
_COMMON_OUT: dict[str, Spec] = {
    "name": _NAME,
    "type": Param(MISSING, choices=OUTPUT_TYPES),
    "column": Param(None, "str", "null"),
    "dependencies": ListOf(Param(None, "str"), [], nullable=False),
    "reduce_input": Param("sum", "null", choices=("sum", "mean", "avg", "max", "concat", "last")),
    "reduce_dependencies": Param(
        "sum", "null", choices=("sum", "mean", "avg", "max", "concat", "last")
    ),
    "input_size": Param(None, "int", "null", ge=1),
}
_OUTPUT_EXTRA: dict[str, dict[str, Spec]] = {
    "binary": {
        "threshold": Param(0.5, "float", ge=0.0, le=1.0),
        "calibration": Param(False, "bool"),
    },
    "category": {
        "top_k": Param(3, "int", ge=1),
        "calibration": Param(False, "bool"),
        "num_classes": Param(None, "int", "null", ge=1),
    },
    "number": {"clip": ListOf(Param(None, "float"), None, length=2)},
    "set": {
        "threshold": Param(0.5, "float", ge=0.0, le=1.0),
        "num_classes": Param(None, "int", "null", ge=1),
    },
    "vector": {"vector_size": Param(None, "int", "null", ge=1)},
}
_PARTS_IN = ("preprocessing", "encoder")
_PARTS_OUT = ("preprocessing", "decoder", "loss")


def _part_spec(part: str, ftype: str, output: bool) -> Spec | None:
    if part == "preprocessing":
        return feature_preprocessing(ftype, output=output)
    table: Mapping[str, Variants] = {"encoder": ENCODERS, "decoder": DECODERS, "loss": LOSSES}[part]
    return table.get(ftype)


def _merged(default: Any, own: Any) -> tuple[Any, list[str]]:
    """``own`` laid over the ``defaults`` entry; returns the keys that came from defaults only.

    An own encoder/decoder/loss of another ``type`` than the default's takes nothing from it.
    """
    if isinstance(own, str):
        own = {"type": own}
    if isinstance(default, str):
        default = {"type": default}
    if not isinstance(default, Mapping):
        return own, []
    if own is None:
        own = {}
    if not isinstance(own, Mapping):
        return own, []
    if "type" in own and "type" in default and own["type"] != default["type"]:
        return own, []
    borrowed = [k for k in default if k not in own]
    return {**copy.deepcopy(dict(default)), **own}, borrowed


def check_feature(
    raw: Any, path: KeyPath, ctx: Ctx, *, output: bool, defaults: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Validate and render one feature; problems go to ``ctx``. Returns None when the
    feature is too broken to render (not a mapping, no usable type)."""
    if not isinstance(raw, Mapping):
        ctx.problem(path, "a feature must be a mapping with 'name' and 'type'")
        return None
    common = dict(_COMMON_OUT if output else _COMMON_IN)
    ftype = raw.get("type")
    if output and isinstance(ftype, str) and ftype in INPUT_ONLY_TYPES:
        ctx.problem(
            (*path, "type"),
            f"'{ftype}' features can only be inputs",
            hint=allowed_hint(OUTPUT_TYPES),
        )
        common["type"] = Param(MISSING, "str")
    parts = _PARTS_OUT if output else _PARTS_IN
    known = isinstance(ftype, str) and ftype in (OUTPUT_TYPES if output else FEATURE_TYPES)
    extra = _OUTPUT_EXTRA.get(str(ftype), {}) if output and known else {}
    fields = {**common, **extra}
    rendered_only = ("proc_column", "default_validation_metric")
    head = {k: v for k, v in raw.items() if k not in parts and k not in rendered_only}
    for part in parts:
        fields[part] = _Opaque()
    if known:
        head = _flag_unnested(head, fields, str(ftype), output, path, ctx)
    out: dict[str, Any] = Section(fields).check(head, path, ctx)
    if isinstance(raw.get("proc_column"), str):
        out["proc_column"] = raw["proc_column"]
    elif "proc_column" in raw:
        Param(None, "str").check(raw["proc_column"], (*path, "proc_column"), ctx)
    if out.get("column") is None and isinstance(out.get("name"), str):
        out["column"] = out["name"]
    if not known:
        for part in parts:  # unknown type: keep what was written, checked above
            if part in raw:
                out[part] = copy.deepcopy(raw[part])
        return out
    type_defaults = defaults.get(str(ftype), {}) if isinstance(defaults, Mapping) else {}
    for part in parts:
        spec = _part_spec(part, str(ftype), output)
        if isinstance(spec, Loose) and part not in raw and part not in type_defaults:
            out.pop(part, None)  # not modelled and not written: nothing to render
            continue
        value, borrowed = _merged(type_defaults.get(part), raw.get(part))
        with ctx.muted([(*path, part, key) for key in borrowed]):
            out[part] = spec.check(value, (*path, part), ctx) if spec else value
    if output:
        metric = DEFAULT_VALIDATION_METRIC[str(ftype)]
        if raw.get("default_validation_metric", metric) != metric:
            ctx.problem(
                (*path, "default_validation_metric"),
                f"the default validation metric of {ftype} features is '{metric}'",
                hint="choose another one with trainer.validation_metric",
            )
        out["default_validation_metric"] = metric
    return out


def _flag_unnested(
    head: dict[str, Any],
    fields: Mapping[str, Spec],
    ftype: str,
    output: bool,
    path: KeyPath,
    ctx: Ctx,
) -> dict[str, Any]:
    """Ludwig < 0.6 wrote encoder/decoder parameters on the feature itself: say where they go
    now (instead of a bare "unknown key"). Returns ``head`` without them."""
    part = "decoder" if output else "encoder"
    variants = (DECODERS if output else ENCODERS).get(ftype)
    nested = {
        k
        for v in (variants.variants.values() if variants else ())
        if isinstance(v, Section)
        for k in v.fields
    }
    stray = [k for k in head if k not in fields and k in nested]
    for key in stray:
        ctx.problem(
            (*path, key),
            f"'{key}' is a{'' if output else 'n'} {part} parameter",
            hint=f"move it under '{part}:' (Ludwig 0.6+ nests {part} parameters)",
            key=True,
        )
    return {k: v for k, v in head.items() if k not in stray}


class _Opaque(Spec):
    """Placeholder so the common-key check knows these keys; checked separately."""

    def default(self) -> Any:
        return None

    def check(self, value: Any, path: KeyPath, ctx: Ctx) -> Any:
        return value


def check_defaults(raw: Any, path: KeyPath, ctx: Ctx) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate the ``defaults`` section.

    Returns (what the user wrote, known-good parts only, for merging into features; the
    rendered section with every modelled type's defaults filled in).
    """
    written: dict[str, Any] = {}
    if raw is not None and not isinstance(raw, Mapping):
        ctx.problem(path, "must be a mapping of feature type -> {preprocessing, encoder, ...}")
        raw = {}
    raw = raw or {}
    for ftype, body in raw.items():
        if ftype not in FEATURE_TYPES and ftype not in OUTPUT_TYPES:
            hint = suggest(str(ftype), FEATURE_TYPES) or allowed_hint(FEATURE_TYPES)
            ctx.problem((*path, ftype), f"unknown feature type '{ftype}'", hint=hint, key=True)
            continue
        written[ftype] = _check_type_defaults(ftype, body, (*path, ftype), ctx)
    rendered = {t: _render_type_defaults(t, written.get(t, {})) for t in _RENDERED_DEFAULT_TYPES}
    for ftype, body in written.items():
        rendered.setdefault(ftype, body)
    return written, rendered


_RENDERED_DEFAULT_TYPES = (
    "binary",
    "category",
    "number",
    "set",
    "bag",
    "vector",
    "date",
    "sequence",
    "text",
)


def _check_type_defaults(ftype: str, body: Any, path: KeyPath, ctx: Ctx) -> dict[str, Any]:
    parts = ("preprocessing", "encoder", "decoder", "loss")
    if not isinstance(body, Mapping):
        ctx.problem(path, "must be a mapping with preprocessing / encoder / decoder / loss")
        return {}
    kept: dict[str, Any] = {}
    for part, value in body.items():
        if part not in parts:
            ctx.problem(
                (*path, part),
                f"unknown key '{part}'",
                hint=suggest(str(part), parts) or allowed_hint(parts),
                key=True,
            )
            continue
        spec = _part_spec(part, ftype, output=part in ("decoder", "loss"))
        if spec is None:
            ctx.problem((*path, part), f"'{ftype}' features have no {part}", key=True)
            continue
        before = len(ctx.problems)
        spec.check(value, (*path, part), ctx)
        if len(ctx.problems) == before:
            kept[part] = {"type": value} if isinstance(value, str) else value
    return kept


def _render_type_defaults(ftype: str, written: Mapping[str, Any]) -> dict[str, Any]:
    silent = Ctx()
    out: dict[str, Any] = {}
    for part in ("preprocessing", "encoder", "decoder", "loss"):
        spec = _part_spec(part, ftype, output=part in ("decoder", "loss"))
        if spec is not None:
            out[part] = spec.check(written.get(part), (), silent)
    return out
