"""Vocabulary features: category, set, bag, text and sequence, laid out as Ludwig 0.11 lays them.

Tokenizers (Ludwig names): ``space``, ``space_punct``, ``characters``, ``comma``,
``underscore``; ``lowercase`` lower-cases first. Vocabularies keep the ``most_common`` values
or tokens of the training split, most frequent first (ties by first appearance), with Ludwig's
special symbols: text and sequence (and bag) vocabularies start with ``<EOS>``, ``<SOS>``,
``<PAD>``, ``<UNK>``, and each text or sequence row becomes ``<SOS>`` + its tokens + ``<EOS>``,
padded with ``<PAD>`` to the longest row (+2) or ``max_sequence_length``; a set vocabulary holds
``<UNK>`` as its fourth entry; a category vocabulary holds only the values, with ``<UNK>`` first
when there are more values than ``most_common`` (an unseen input value then reads as the most
frequent one, as in Ludwig).
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
    "START",
    "STOP",
    "TOKENIZERS",
    "UNK",
    "fit_category",
    "fit_tokens",
    "transform_category",
    "transform_multi_hot",
    "transform_sequence",
    "transform_token_bag",
]

STOP, START, PAD, UNK = "<EOS>", "<SOS>", "<PAD>", "<UNK>"
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
    """Metadata for a category feature: ``idx2str``, the unknown index and the fill value.

    The values (stripped) most frequent first, ``<UNK>`` first only when there are more than
    ``most_common`` of them. An unseen value maps to ``<UNK>`` when there is one, else to the most
    frequent value (inputs, as Ludwig) or to -1 (outputs: left out of the loss and metrics).
    """
    meta = {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_const"),
        "fill_value": fit_fill(series, {"fill_value": UNK, **preprocessing}),
        "lowercase": bool(preprocessing.get("lowercase", False)),
    }
    values = [v.strip() for v in _texts(series, meta)]
    limit = preprocessing.get("most_common", 10000)
    classes = _most_common(values, None)
    if limit is not None and len(classes) > int(limit):
        # more values than the vocabulary keeps: the rest train as <UNK>, as in Ludwig
        kept = [UNK, *[c for c in classes if c != UNK][: int(limit)]]
        return {**meta, "idx2str": kept, "unknown": 0}
    return {**meta, "idx2str": classes, "unknown": None if output else 0}


def transform_category(series: pd.Series, meta: Mapping[str, Any]) -> np.ndarray:
    """int64 ``[rows]`` class indices; unseen values -> ``meta["unknown"]`` (None: -1)."""
    index = {value: i for i, value in enumerate(meta["idx2str"])}
    unknown = -1 if meta["unknown"] is None else meta["unknown"]
    return np.fromiter(
        (index.get(v.strip(), unknown) for v in _texts(series, meta)),
        dtype=np.int64,
        count=len(series),
    )


#: which of Ludwig's special symbols a vocabulary holds, by feature type
_SPECIALS = {"sequence": (STOP, START, PAD, UNK), "bag": (STOP, START, PAD, UNK), "set": (UNK,)}


def _with_specials(vocab: list[str], layout: str, symbols: Mapping[str, str]) -> list[str]:
    """Ludwig's ``add_or_move_symbol``: each special at its place (<EOS> 0 ... <UNK> 3)."""
    places = {STOP: 0, START: 1, PAD: 2, UNK: 3}
    out = list(vocab)
    for special in _SPECIALS[layout]:
        symbol = symbols.get(special, special)
        if symbol in out:
            out.remove(symbol)
        out.insert(places[special], symbol)
    return out


def fit_tokens(
    series: pd.Series, preprocessing: Mapping[str, Any], default_tokenizer: str, layout: str
) -> dict[str, Any]:
    """Metadata for text / sequence / set / bag: tokenizer, vocabulary, sequence length.

    ``layout`` is ``"sequence"`` (text and sequence: rows framed by ``<SOS>``/``<EOS>``, the
    length the longest row + 2 or ``max_sequence_length`` if smaller, or ``sequence_length``),
    ``"bag"`` or ``"set"`` (which special symbols the vocabulary holds).
    """
    symbols = {
        PAD: preprocessing.get("padding_symbol") or PAD,
        UNK: preprocessing.get("unknown_symbol") or UNK,
    }
    meta: dict[str, Any] = {
        "missing_value_strategy": preprocessing.get("missing_value_strategy", "fill_with_const"),
        "fill_value": fit_fill(series, {"fill_value": "", **preprocessing}),
        "lowercase": bool(preprocessing.get("lowercase", False)),
        "tokenizer": preprocessing.get("tokenizer") or default_tokenizer,
        "padding": preprocessing.get("padding") or "right",
        "framed": layout == "sequence",
    }
    tokenize = _tokenizer(meta, default_tokenizer)
    docs = [tokenize(t) for t in _texts(series, meta)]
    vocab = _most_common(
        (tok for doc in docs for tok in doc), preprocessing.get("most_common", 20000)
    )
    meta["idx2str"] = _with_specials(vocab, layout, symbols)
    meta["pad"] = meta["idx2str"].index(symbols[PAD]) if layout != "set" else 0
    meta["unk"] = meta["idx2str"].index(symbols[UNK])
    longest = max((len(d) for d in docs), default=0) + (2 if layout == "sequence" else 0)
    fixed, limit = preprocessing.get("sequence_length"), preprocessing.get("max_sequence_length")
    length = int(fixed) if fixed else min(longest, int(limit)) if limit else longest
    meta["max_sequence_length"] = max(1, length)
    return meta


def _docs(series: pd.Series, meta: Mapping[str, Any]) -> list[list[int]]:
    tokenize = _tokenizer(meta, meta["tokenizer"])
    index = {tok: i for i, tok in enumerate(meta["idx2str"])}
    unk = int(meta["unk"])
    texts = _texts(series, meta)
    return [[index.get(tok, unk) for tok in tokenize(text)] for text in texts]


def transform_sequence(series: pd.Series, meta: Mapping[str, Any]) -> np.ndarray:
    """int64 ``[rows, max_sequence_length]`` token ids framed and padded as in Ludwig.

    ``<SOS>`` + the tokens + ``<EOS>``, cut at ``max_sequence_length``, padded with ``<PAD>`` on
    the right (on the left with ``padding: left``).
    """
    length = int(meta["max_sequence_length"])
    out = np.full((len(series), length), int(meta["pad"]), dtype=np.int64)
    start, stop = meta["idx2str"].index(START), meta["idx2str"].index(STOP)
    left = meta.get("padding") == "left"
    for row, ids in enumerate(_docs(series, meta)):
        kept = ([start, *ids, stop] if meta.get("framed") else ids)[:length]
        if kept and left:
            out[row, length - len(kept) :] = kept
        elif kept:
            out[row, : len(kept)] = kept
    return out


def transform_token_bag(
    series: pd.Series, meta: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Padded distinct token ids ``[rows, k]`` (int64) and their counts (float32; 0 = padding)."""
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
    """float32 ``[rows, vocab]`` multi-hot (set outputs); unseen tokens count as ``<UNK>``."""
    out = np.zeros((len(series), len(meta["idx2str"])), dtype=np.float32)
    for row, ids in enumerate(_docs(series, meta)):
        out[row, ids] = 1.0
    return out
