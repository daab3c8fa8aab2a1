"""Vocabulary features: category, set, bag, text and sequence.

Tokenizers (Ludwig names): ``space``, ``space_punct``, ``characters``, ``comma``,
``underscore``; ``lowercase`` lower-cases first. Vocabularies keep the ``most_common``
tokens of the training split (ties by first appearance); unseen values map to
``<UNK>`` at predict time. Input vocabularies start with ``<PAD>`` (sequences, sets,
bags) and ``<UNK>``; category outputs hold only the classes seen in training.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.missing import apply_fill, fit_fill

__all__ = [
    "PAD",
    "TOKENIZERS",
    "UNK",
    "fit_category",
    "fit_tokens",
    "transform_category",
    "transform_multi_hot",
    "transform_sequence",
    "transform_token_bag",
]

PAD, UNK = "<PAD>", "<UNK>"
_PUNCT = re.compile(r"\w+|[^\w\s]", re.UNICODE)

TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "space": str.split,
    "space_punct": _PUNCT.findall,
    "characters": lambda text: [c for c in text if not c.isspace()],
    "comma": lambda text: [t.strip() for t in text.split(",") if t.strip()],
    "underscore": lambda text: [t for t in text.split("_") if t],
}


def _tokenizer(preprocessing: Mapping[str, Any], default: str) -> Callable[[str], list[str]]:
    name = preprocessing.get("tokenizer") or default
    if name not in TOKENIZERS:
        known = ", ".join(sorted(TOKENIZERS))
        raise DataError(f"tokenizer {name!r} is not supported by the built-in engine ({known})")
    return TOKENIZERS[name]


def _texts(series: pd.Series, meta: Mapping[str, Any]) -> list[str]:
    filled = apply_fill(series, meta["missing_value_strategy"], meta["fill_value"])
    texts = ["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in filled]
    return [t.lower() for t in texts] if meta.get("lowercase") else texts


def _most_common(tokens: Iterable[str], limit: int | None) -> list[str]:
    counts = Counter(tokens)
    # Counter.most_common keeps first-seen order among equal counts
    return [token for token, _ in counts.most_common(limit)]


def fit_category(
    series: pd.Series, preprocessing: Mapping[str, Any], *, output: bool
) -> dict[str, Any]:
    """Metadata for a category feature: ``idx2str`` (and the fill value)."""
    meta = {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_const"),
        "fill_value": fit_fill(series, {"fill_value": UNK, **preprocessing}),
        "lowercase": bool(preprocessing.get("lowercase", False)),
    }
    values = _texts(series, meta)
    limit = preprocessing.get("most_common", 10000)
    classes = _most_common(values, limit)
    if output:
        classes = [c for c in classes if c != UNK]
        if limit is not None and len(set(values) - {UNK}) > len(classes):
            # more classes than the vocabulary keeps: the rest train as <UNK>, as in Ludwig
            return {**meta, "idx2str": [UNK, *classes], "unknown": 0}
        return {**meta, "idx2str": classes, "unknown": None}
    return {**meta, "idx2str": [UNK, *[c for c in classes if c != UNK]], "unknown": 0}


def transform_category(series: pd.Series, meta: Mapping[str, Any]) -> np.ndarray:
    """int64 ``[rows]`` class indices; unseen values -> ``<UNK>`` (inputs) or -1 (outputs)."""
    index = {value: i for i, value in enumerate(meta["idx2str"])}
    unknown = -1 if meta["unknown"] is None else meta["unknown"]
    return np.fromiter(
        (index.get(v, unknown) for v in _texts(series, meta)), dtype=np.int64, count=len(series)
    )


def fit_tokens(
    series: pd.Series, preprocessing: Mapping[str, Any], default_tokenizer: str, *, output: bool
) -> dict[str, Any]:
    """Metadata for text / sequence / set / bag: tokenizer, vocabulary, sequence length."""
    meta: dict[str, Any] = {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_const"),
        "fill_value": fit_fill(series, {"fill_value": "", **preprocessing}),
        "lowercase": bool(preprocessing.get("lowercase", False)),
        "tokenizer": preprocessing.get("tokenizer") or default_tokenizer,
    }
    tokenize = _tokenizer(meta, default_tokenizer)
    docs = [_tokens(tokenize, t) for t in _texts(series, meta)]
    vocab = _most_common(
        (tok for doc in docs for tok in doc), preprocessing.get("most_common", 20000)
    )
    specials = [] if output else [PAD, UNK]
    meta["idx2str"] = specials + [t for t in vocab if t not in (PAD, UNK)]
    longest = max((len(d) for d in docs), default=1)
    limit = preprocessing.get("max_sequence_length") or longest
    meta["max_sequence_length"] = max(1, min(int(limit), longest))
    meta["max_set_size"] = max(1, max((len(set(d)) for d in docs), default=1))
    return meta


def _docs(series: pd.Series, meta: Mapping[str, Any]) -> list[list[int]]:
    tokenize = _tokenizer(meta, meta["tokenizer"])
    index = {tok: i for i, tok in enumerate(meta["idx2str"])}
    unk = index.get(UNK, -1)
    texts = _texts(series, meta)
    return [[index.get(tok, unk) for tok in _tokens(tokenize, text)] for text in texts]


def _tokens(tokenize: Callable[[str], list[str]], text: str) -> list[str]:
    """Tokens of one text.

    A cell filled with ``<UNK>`` (Ludwig's default fill value for missing text) is the one unknown
    token, not ``<``, ``UNK``, ``>``.
    """
    return [UNK] if text in (UNK, UNK.lower()) else tokenize(text)


def transform_sequence(series: pd.Series, meta: Mapping[str, Any]) -> np.ndarray:
    """int64 ``[rows, max_sequence_length]`` token ids, right-padded with ``<PAD>`` (0)."""
    length = int(meta["max_sequence_length"])
    out = np.zeros((len(series), length), dtype=np.int64)
    for row, ids in enumerate(_docs(series, meta)):
        kept = ids[:length]
        out[row, : len(kept)] = kept
    return out


def transform_token_bag(
    series: pd.Series, meta: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Padded distinct token ids ``[rows, k]`` (int64, 0 = pad) and their counts (float32)."""
    docs = [Counter(doc) for doc in _docs(series, meta)]
    width = max(1, max((len(d) for d in docs), default=1))
    ids = np.zeros((len(docs), width), dtype=np.int64)
    counts = np.zeros((len(docs), width), dtype=np.float32)
    for row, doc in enumerate(docs):
        items = sorted(doc.items())
        ids[row, : len(items)] = [i for i, _ in items]
        counts[row, : len(items)] = [c for _, c in items]
    return ids, counts


def transform_multi_hot(series: pd.Series, meta: Mapping[str, Any]) -> np.ndarray:
    """float32 ``[rows, vocab]`` multi-hot (set outputs); unseen tokens are dropped."""
    out = np.zeros((len(series), len(meta["idx2str"])), dtype=np.float32)
    for row, ids in enumerate(_docs(series, meta)):
        known = [i for i in ids if i >= 0]
        out[row, known] = 1.0
    return out
