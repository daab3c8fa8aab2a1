"""Input and output features.

Their types, how ``defaults`` apply to them, and the keys Ludwig renders beside its schema
(``active``, ``column``, ``proc_column``).

Each feature is checked against Ludwig's own schema (``ludwig_json``): the feature ``type``
picks its keys, encoder / decoder / loss variants and preprocessing, with Ludwig's defaults.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from ludwig_nb.config.schema.fields import Ctx, Param, allowed_hint
from ludwig_nb.config.schema.ludwig_json import ludwig_spec
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

#: the parts a ``defaults`` entry gives to features (Ludwig's merge_with_defaults)
_INPUT_PARTS = ("preprocessing", "encoder")
_OUTPUT_PARTS = ("decoder", "loss")

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


def _merged(default: object, own: object) -> tuple[object, list[str]]:
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
    if own.get("type", default.get("type")) != default.get("type"):
        return own, []
    borrowed = [k for k in default if k not in own]
    return {**copy.deepcopy(dict(default)), **own}, borrowed


def check_feature(
    raw: object, path: KeyPath, ctx: Ctx, *, output: bool, defaults: Mapping[str, object]
) -> dict[str, object] | None:
    """Validate and render one feature; problems go to ``ctx``.

    Returns None when the feature is too broken to render (not a mapping).
    """
    if not isinstance(raw, Mapping):
        ctx.problem(path, "a feature must be a mapping with 'name' and 'type'")
        return None
    ftype = raw.get("type")
    if output and isinstance(ftype, str) and ftype in INPUT_ONLY_TYPES:
        ctx.problem(
            (*path, "type"),
            f"'{ftype}' features can only be inputs",
            hint=allowed_hint(OUTPUT_TYPES),
        )
        return None
    head = {k: v for k, v in raw.items() if k not in ("active", "proc_column")}
    entry = defaults.get(str(ftype)) if isinstance(defaults, Mapping) else None
    muted: list[KeyPath] = []
    for part in _OUTPUT_PARTS if output else _INPUT_PARTS:
        if isinstance(entry, Mapping) and part in entry:
            head[part], borrowed = _merged(entry[part], head.get(part))
            muted += [(*path, part, key) for key in borrowed]
    spec = ludwig_spec("ecd", "output_features" if output else "input_features", "[]")
    with ctx.muted(muted):
        out: dict[str, object] = spec.check(head, path, ctx)
    if not isinstance(out, dict):
        return None
    if not output:
        if ftype == "image":
            _dropped_size(raw, out, path, ctx)
        _fixed_preprocessing(out)
        if ftype == "image":
            out["augmentation"] = _augmentation(out.get("augmentation"))
    out["active"] = Param(True, "bool").check(raw.get("active", True), (*path, "active"), ctx)
    if out.get("column") is None and isinstance(out.get("name"), str):
        out["column"] = out["name"]
    if raw.get("proc_column") is not None:
        out["proc_column"] = Param(None, "str").check(
            raw["proc_column"], (*path, "proc_column"), ctx
        )
    elif isinstance(out.get("name"), str) and isinstance(out.get("type"), str):
        out["proc_column"] = proc_column(out)
    decoder = out.get("decoder")
    if output and isinstance(decoder, dict) and decoder.get("type") == "tagger":
        out["reduce_input"] = None  # Ludwig: a tagger tags every step, it reduces nothing
    if output and str(ftype) in DEFAULT_VALIDATION_METRIC:
        out.setdefault("default_validation_metric", DEFAULT_VALIDATION_METRIC[str(ftype)])
    return out


#: what ``augmentation: true`` means for an image input (Ludwig's AUGMENTATION_DEFAULT_OPERATIONS)
_DEFAULT_AUGMENTATION = [
    {"type": "random_horizontal_flip"},
    {"type": "random_rotate", "degree": 15},
]


def _augmentation(value: object) -> object:
    """Ludwig renders an image input's augmentation as a list: none, or its default operations."""
    if value is True:
        return copy.deepcopy(_DEFAULT_AUGMENTATION)
    return [] if value in (None, False) else value


def _dropped_size(
    raw: Mapping[str, object], out: Mapping[str, object], path: KeyPath, ctx: Ctx
) -> None:
    """Say so when Ludwig will drop an image input's ``height`` / ``width`` (its own encoders)."""
    encoder, written = out.get("encoder"), raw.get("preprocessing")
    if not isinstance(encoder, dict) or "use_pretrained" in encoder:
        return
    for key in ("height", "width"):
        if isinstance(written, Mapping) and written.get(key) is not None:
            ctx.note(
                (*path, "preprocessing", key),
                f"Ludwig 0.11 ignores {key} with its own image encoders ({encoder.get('type')}): "
                "the size is the mean size of the first images, at most "
                "infer_image_max_height x infer_image_max_width",
                hint="to train on smaller images, set infer_image_max_height and "
                "infer_image_max_width (or resize the files)",
            )
            return


def _fixed_preprocessing(feature: dict[str, object]) -> None:
    """What an encoder imposes on its feature's preprocessing.

    Ludwig's ``set_fixed_preprocessing_params``: a Hugging Face text encoder its own tokenizer,
    tf_idf the idf table, Ludwig's own image encoders no fixed size. (The sizes that torchvision's
    pretrained encoders impose are not modelled.)
    """
    encoder, pre = feature.get("encoder"), feature.get("preprocessing")
    if not isinstance(encoder, dict) or not isinstance(pre, dict):
        return
    if feature.get("type") == "image" and "use_pretrained" not in encoder:
        # Ludwig's own image encoders size themselves to the data: it drops height / width
        pre.update(requires_equal_dimensions=False, height=None, width=None)
    if feature.get("type") in ("audio", "timeseries") and encoder.get("type") != "dense":
        pre["cache_encoder_embeddings"] = False  # Ludwig's sequence encoders never cache
    if feature.get("type") != "text":
        return
    if "use_pretrained" in encoder:
        pre["tokenizer"] = "hf_tokenizer"
        pre["pretrained_model_name_or_path"] = encoder.get("pretrained_model_name_or_path")
    elif encoder.get("type") == "tf_idf":
        pre["compute_idf"] = True


def proc_column(feature: Mapping[str, object]) -> str:
    """Ludwig's name for a feature's preprocessed column.

    Its name and a hash of its type and rendered preprocessing
    (``ludwig.features.feature_utils.compute_feature_hash``).
    """
    data = {"preprocessing": feature.get("preprocessing", {}), "type": feature["type"]}
    text = json.dumps(data, sort_keys=True, ensure_ascii=True)
    digest = base64.b64encode(hashlib.md5(text.encode()).digest(), altchars=b"__")
    return re.sub(r"\W|^(?=\d)", "_", str(feature["name"])) + "_" + digest[:6].decode("ascii")


def check_defaults(
    raw: object, path: KeyPath, ctx: Ctx
) -> tuple[dict[str, Any], dict[str, object]]:
    """Validate the ``defaults`` section.

    Returns (what the user wrote, for merging into features; the rendered section with every
    feature type's defaults filled in, as Ludwig renders it).
    """
    if raw is not None and not isinstance(raw, Mapping):
        ctx.problem(path, "must be a mapping of feature type -> {preprocessing, encoder, ...}")
        raw = {}
    raw = dict(raw or {})
    written = {
        ftype: {
            part: ({"type": value} if isinstance(value, str) else value)
            for part, value in body.items()
        }
        for ftype, body in raw.items()
        if isinstance(body, Mapping)
    }
    rendered: dict[str, Any] = ludwig_spec("ecd", "defaults").check(raw, path, ctx)
    if isinstance(rendered.get("image"), dict):
        image = rendered["image"]
        image["augmentation"] = _augmentation(image.get("augmentation"))
    return written, rendered
