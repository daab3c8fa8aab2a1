"""The checks Ludwig 0.11 runs after its schema, located at the keys the user wrote.

They come from ``ludwig/config_validation/checks.py`` and the schema classes' own ``__post_init__``,
and run on the rendered config. Those that ``cross_checks`` already does (unique names, ties,
checkpoint cadence, validation metric, sample size) are not repeated here.

Not done (they need what validation must not do here): loading an LLM's model config from
the Hugging Face hub, importing hyperopt's search libraries.
"""

from __future__ import annotations

from typing import Any

from ludwig_nb.config.schema.fields import Ctx

__all__ = ["check_like_ludwig"]

_SEQUENCE_INPUTS = ("sequence", "text", "timeseries")


def check_like_ludwig(cfg: dict[str, Any], ctx: Ctx) -> None:
    """Report, in ``ctx``, what Ludwig's own post-schema checks refuse."""
    if cfg.get("model_type") == "llm":
        _llm(cfg, ctx)
        return
    inputs = [f for f in cfg.get("input_features", []) if isinstance(f, dict)]
    outputs = [f for f in cfg.get("output_features", []) if isinstance(f, dict)]
    _comparator(cfg.get("combiner") or {}, inputs, ctx)
    _concat(cfg.get("combiner") or {}, inputs, ctx)
    _class_balance(cfg.get("preprocessing") or {}, outputs, ctx)
    _split(cfg.get("preprocessing") or {}, inputs + outputs, ctx)
    for i, feature in enumerate(inputs):
        _input(feature, ("input_features", i), ctx)
    for i, feature in enumerate(outputs):
        if feature.get("type") == "category_distribution":
            vocab = (feature.get("preprocessing") or {}).get("vocab")
            if not vocab:
                ctx.problem(
                    ("output_features", i, "preprocessing"),
                    "a category_distribution output needs preprocessing.vocab",
                    hint="list the classes: preprocessing: {vocab: [a, b, c]}",
                )
    _tagger(inputs, outputs, ctx)
    _text_to_text(inputs, outputs, ctx)


def _encoder(feature: dict[str, object]) -> dict[str, object]:
    encoder = feature.get("encoder")
    return encoder if isinstance(encoder, dict) else {}


def _input(feature: dict[str, Any], path: tuple[Any, ...], ctx: Ctx) -> None:
    encoder = _encoder(feature)
    kind, etype = feature.get("type"), encoder.get("type")
    preprocessing = feature.get("preprocessing") or {}
    if (
        kind == "text"
        and etype == "auto_transformer"
        and not encoder.get("pretrained_model_name_or_path")
    ):
        ctx.problem(
            (*path, "encoder"),
            "the auto_transformer encoder needs pretrained_model_name_or_path",
            hint="e.g. pretrained_model_name_or_path: bert-base-uncased",
        )
    if kind == "text" and etype == "llm" and not encoder.get("base_model"):
        ctx.problem((*path, "encoder"), "the llm text encoder needs base_model")
    if (
        kind == "text"
        and preprocessing.get("tokenizer") == "hf_tokenizer"
        and not preprocessing.get("pretrained_model_name_or_path")
    ):
        ctx.problem(
            (*path, "preprocessing", "tokenizer"),
            "the hf_tokenizer needs preprocessing.pretrained_model_name_or_path",
        )
    hidden, heads = encoder.get("hidden_size"), encoder.get("num_heads")
    if (
        kind in _SEQUENCE_INPUTS
        and etype == "transformer"
        and isinstance(hidden, int)
        and isinstance(heads, int)
        and heads > 0
        and hidden % heads
    ):
        ctx.problem(
            (*path, "encoder", "hidden_size"),
            f"hidden_size ({hidden}) must be divisible by num_heads ({heads})",
        )


def _comparator(combiner: dict[str, Any], inputs: list[dict[str, object]], ctx: Ctx) -> None:
    if combiner.get("type") != "comparator":
        return
    names = [f.get("name") for f in inputs]
    entities: list[object] = []
    for key in ("entity_1", "entity_2"):
        listed = combiner.get(key)
        if not listed:
            ctx.problem(
                ("combiner", key),
                f"the comparator combiner needs {key}: a list of input feature names",
            )
            return
        for j, name in enumerate(listed):
            if name not in names:
                ctx.problem(("combiner", key, j), f"no input feature named '{name}'")
        entities += list(listed)
    if sorted(map(str, entities)) != sorted(map(str, names)):
        ctx.problem(
            ("combiner",),
            "every input feature must be in entity_1 or entity_2 of the comparator combiner",
        )


def _concat(combiner: dict[str, object], inputs: list[dict[str, object]], ctx: Ctx) -> None:
    if combiner.get("type") != "concat":
        return
    unreduced = [
        i
        for i, f in enumerate(inputs)
        if f.get("type") in _SEQUENCE_INPUTS
        and "reduce_output" in _encoder(f)
        and _encoder(f)["reduce_output"] is None
    ]
    if unreduced and len(unreduced) < len(inputs):
        ctx.problem(
            ("input_features", unreduced[0], "encoder", "reduce_output"),
            "the concat combiner cannot mix unreduced sequence features with other features",
            hint="set reduce_output (e.g. sum), or use the sequence_concat combiner",
        )


def _class_balance(pre: dict[str, object], outputs: list[dict[str, object]], ctx: Ctx) -> None:
    over, under = pre.get("oversample_minority"), pre.get("undersample_majority")
    if not (over or under):
        return
    key = "oversample_minority" if over else "undersample_majority"
    if over and under:
        ctx.problem(
            ("preprocessing", "undersample_majority"),
            "oversample_minority and undersample_majority cannot both be set",
        )
    elif len(outputs) != 1 or outputs[0].get("type") != "binary":
        ctx.problem(("preprocessing", key), f"{key} needs exactly one output feature, binary")


def _split(pre: dict[str, Any], features: list[dict[str, Any]], ctx: Ctx) -> None:
    split = pre.get("split") or {}
    wanted = {"stratify": ("binary", "category"), "datetime": ("date",)}.get(str(split.get("type")))
    column = split.get("column")
    if wanted is None or column is None:
        return
    kinds = [f.get("type") for f in features if f.get("column") == column]
    if kinds and kinds[0] not in wanted:
        ctx.problem(
            ("preprocessing", "split", "column"),
            f"a {split['type']} split's column '{column}' must be a "
            f"{' or '.join(wanted)} feature, not {kinds[0]}",
        )


def _tagger(inputs: list[dict[str, object]], outputs: list[dict[str, Any]], ctx: Ctx) -> None:
    tagged = [
        i
        for i, f in enumerate(outputs)
        if f.get("type") in ("text", "sequence")
        and (f.get("decoder") or {}).get("type") == "tagger"
    ]
    if not tagged:
        return
    sequences = [f for f in inputs if f.get("type") in _SEQUENCE_INPUTS]
    if any(_encoder(f).get("reduce_output", "") is None for f in sequences):
        return
    ctx.problem(
        ("output_features", tagged[0], "decoder", "type"),
        "the tagger decoder needs a text, sequence or timeseries input"
        + (" whose encoder has reduce_output: null" if sequences else ""),
    )


def _text_to_text(
    inputs: list[dict[str, object]], outputs: list[dict[str, object]], ctx: Ctx
) -> None:
    if not inputs or not outputs:
        return
    text_to_text = inputs[0].get("type") == "text" and outputs[0].get("type") == "text"
    if text_to_text and _encoder(inputs[0]).get("pretrained_model_name_or_path"):
        ctx.problem(
            ("input_features", 0, "encoder"),
            "a pretrained text encoder with a text output is a text-to-text model",
            hint="use model_type: llm",
        )


def _llm(cfg: dict[str, Any], ctx: Ctx) -> None:
    inputs = cfg.get("input_features") or []
    if len(inputs) != 1 or not isinstance(inputs[0], dict) or inputs[0].get("type") != "text":
        ctx.problem(("input_features",), "an LLM needs exactly one text input feature")
    trainer = cfg.get("trainer") or {}
    outputs = cfg.get("output_features") or []
    if trainer.get("type") == "finetune" and outputs and outputs[0].get("type") != "text":
        ctx.problem(
            ("output_features", 0, "type"),
            "fine-tuning an LLM needs a text output feature",
        )
    adapter = cfg.get("adapter") if isinstance(cfg.get("adapter"), dict) else None
    zero_shot = trainer.get("type") == "none" and (adapter or {}).get("pretrained_adapter_weights")
    if adapter is not None and trainer.get("type") != "finetune" and not zero_shot:
        ctx.problem(("trainer", "type"), "an LLM with an adapter needs trainer.type: finetune")
