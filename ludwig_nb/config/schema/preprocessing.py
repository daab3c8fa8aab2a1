"""Preprocessing: the global section (sampling, split) and each feature type's own section,
with Ludwig 0.11's names and defaults."""

from __future__ import annotations

from ludwig_nb.config.schema.fields import ListOf, Param, Section, Spec
from ludwig_nb.config.schema.variants import Loose, Variants

__all__ = [
    "MISSING_VALUE_STRATEGIES",
    "NORMALIZATIONS",
    "SPLIT_TYPES",
    "TOKENIZERS",
    "feature_preprocessing",
    "global_preprocessing",
]

MISSING_VALUE_STRATEGIES = ("fill_with_const", "fill_with_mode", "bfill", "ffill", "drop_row")
NORMALIZATIONS = ("zscore", "minmax", "log1p", "iq")
TOKENIZERS = (
    "space",
    "space_punct",
    "underscore",
    "comma",
    "untokenized",
    "stripped",
    "characters",
    "ngram",
    "english_tokenize",
    "english_tokenize_filter",
    "english_tokenize_remove_stopwords",
    "english_lemmatize",
    "english_lemmatize_filter",
    "english_lemmatize_remove_stopwords",
    "sentencepiece",
    "clip",
    "gpt2bpe",
    "bert",
    "hf_tokenizer",
)
SPLIT_TYPES = ("random", "fixed", "stratify", "datetime", "hash")

_ANY_FILL = ("str", "int", "float", "bool", "null")


def _missing(default: str, *extra: str) -> Param:
    return Param(default, choices=(*MISSING_VALUE_STRATEGIES, *extra))


def _fill(default: object) -> dict[str, Spec]:
    return {
        "fill_value": Param(default, *_ANY_FILL),
        "computed_fill_value": Param(default, *_ANY_FILL),
    }


def _number(output: bool) -> Section:
    return Section(
        {
            "missing_value_strategy": _missing(
                "drop_row" if output else "fill_with_const", "fill_with_mean"
            ),
            **_fill(0.0),
            "normalization": Param(None if output else "zscore", "null", choices=NORMALIZATIONS),
            "outlier_strategy": Param(
                None, "null", choices=(*MISSING_VALUE_STRATEGIES, "fill_with_mean")
            ),
            "outlier_threshold": Param(3.0, "float", gt=0.0),
            "computed_outlier_fill_value": Param(0.0, "float"),
        }
    )


def _binary(output: bool) -> Section:
    return Section(
        {
            "missing_value_strategy": _missing(
                "drop_row" if output else "fill_with_false", "fill_with_false"
            ),
            **_fill(None),
            "fallback_true_label": Param(None, "str", "int", "float", "bool", "null"),
        }
    )


def _category(output: bool) -> Section:
    return Section(
        {
            "missing_value_strategy": _missing("drop_row" if output else "fill_with_const"),
            **_fill("<UNK>"),
            "lowercase": Param(False, "bool"),
            "most_common": Param(10000, "int", ge=1),
            "cache_encoder_embeddings": Param(False, "bool"),
        }
    )


def _sequence_like(output: bool, *, text: bool) -> Section:
    fields: dict[str, Spec] = {
        "tokenizer": Param("space_punct" if text else "space", choices=TOKENIZERS),
        "vocab_file": Param(None, "str", "null"),
        "sequence_length": Param(None, "int", "null", ge=1),
        "max_sequence_length": Param(256, "int", "null", ge=1),
        "most_common": Param(20000, "int", ge=1),
        "padding_symbol": Param("<PAD>", "str"),
        "unknown_symbol": Param("<UNK>", "str"),
        "padding": Param("right", choices=("left", "right")),
        "lowercase": Param(text, "bool"),
        "missing_value_strategy": _missing("drop_row" if output else "fill_with_const"),
        **_fill("<UNK>"),
        "ngram_size": Param(2, "int", ge=1),
        "cache_encoder_embeddings": Param(False, "bool"),
    }
    if text:
        fields = {
            "pretrained_model_name_or_path": Param(None, "str", "null"),
            **fields,
            "compute_idf": Param(False, "bool"),
        }
    return Section(fields)


def _set_like(output: bool) -> Section:
    return Section(
        {
            "tokenizer": Param("space", choices=TOKENIZERS),
            "missing_value_strategy": _missing("drop_row" if output else "fill_with_const"),
            **_fill("<UNK>"),
            "lowercase": Param(False, "bool"),
            "most_common": Param(10000, "int", ge=1),
        }
    )


def _vector(output: bool) -> Section:
    return Section(
        {
            "vector_size": Param(None, "int", "null", ge=1),
            "missing_value_strategy": _missing("drop_row" if output else "fill_with_const"),
            **_fill(""),
        }
    )


def _date() -> Section:
    return Section(
        {
            "missing_value_strategy": _missing("fill_with_const"),
            **_fill(""),
            "datetime_format": Param(None, "str", "null"),
        }
    )


def _h3() -> Section:
    return Section(
        {"missing_value_strategy": _missing("fill_with_const"), **_fill(576495936675512319)}
    )


def _build(output: bool) -> dict[str, Spec]:
    return {
        "binary": _binary(output),
        "number": _number(output),
        "category": _category(output),
        "category_distribution": Loose(),
        "text": _sequence_like(output, text=True),
        "sequence": _sequence_like(output, text=False),
        "set": _set_like(output),
        "bag": _set_like(output),
        "vector": _vector(output),
        "date": _date(),
        "h3": _h3(),
        "timeseries": Loose(),
        "audio": Loose(),
        "image": Loose(),
    }


_INPUT = _build(output=False)
_OUTPUT = _build(output=True)


def feature_preprocessing(feature_type: str, *, output: bool) -> Spec | None:
    """The ``preprocessing`` schema of a feature type (input or output side), or None."""
    return (_OUTPUT if output else _INPUT).get(feature_type)


def _probabilities() -> ListOf:
    return ListOf(Param(0.0, "float", ge=0.0, le=1.0), [0.7, 0.1, 0.2], nullable=False, length=3)


_SPLIT = Variants(
    {
        "random": Section({"probabilities": _probabilities()}),
        "fixed": Section({"column": Param("split", "str")}),
        "stratify": Section(
            {"column": Param(None, "str", "null"), "probabilities": _probabilities()}
        ),
        "datetime": Section(
            {
                "column": Param(None, "str", "null"),
                "probabilities": _probabilities(),
                "datetime_format": Param(None, "str", "null"),
                "fill_value": Param("", "str"),
            }
        ),
        "hash": Section({"column": Param(None, "str", "null"), "probabilities": _probabilities()}),
    },
    "random",
    what="split type",
)


def global_preprocessing() -> Section:
    """The top-level ``preprocessing`` section."""
    return Section(
        {
            "sample_ratio": Param(1.0, "float", gt=0.0, le=1.0),
            "sample_size": Param(None, "int", "null", ge=0),
            "oversample_minority": Param(None, "float", "null", gt=0.0),
            "undersample_majority": Param(None, "float", "null", gt=0.0),
            "split": _SPLIT,
            "global_max_sequence_length": Param(None, "int", "null", ge=1),
        }
    )
