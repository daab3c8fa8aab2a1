"""Vocabularies, tokenizers and sequence lengths."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin.preprocessing.vocab import (
    TOKENIZERS,
    UNK,
    fit_category,
    fit_tokens,
    transform_category,
    transform_multi_hot,
    transform_sequence,
    transform_token_bag,
)


def test_category_most_common_and_unknown():
    train = pd.Series(["b", "a", "b", "c", "b", "a"])
    meta = fit_category(train, {"most_common": 2}, output=False)
    assert meta["idx2str"] == [UNK, "b", "a"]
    assert transform_category(pd.Series(["a", "c", "zzz"]), meta).tolist() == [2, 0, 0]
    out = fit_category(train, {}, output=True)
    assert out["idx2str"] == ["b", "a", "c"]
    assert transform_category(pd.Series(["zzz"]), out).tolist() == [-1]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("space", ["Hello,", "world!"]),
        ("space_punct", ["Hello", ",", "world", "!"]),
        ("characters", list("Hello,world!")),
        ("comma", ["Hello", "world!"]),
    ],
)
def test_tokenizers(name, expected):
    assert TOKENIZERS[name]("Hello, world!") == expected


def test_text_lowercase_and_max_sequence_length():
    train = pd.Series(["The cat sat", "the DOG", None])
    meta = fit_tokens(train, {"lowercase": True, "max_sequence_length": 2}, "space", output=False)
    assert meta["idx2str"][:3] == ["<PAD>", UNK, "the"]
    assert meta["max_sequence_length"] == 2
    ids = transform_sequence(pd.Series(["THE cat bird", "dog"]), meta)
    index = {t: i for i, t in enumerate(meta["idx2str"])}
    assert ids.tolist() == [[index["the"], index["cat"]], [index["dog"], 0]]
    longest = fit_tokens(train, {"max_sequence_length": 256}, "space", output=False)
    assert longest["max_sequence_length"] == 3  # never longer than the longest text


def test_set_and_bag_encodings():
    meta = fit_tokens(pd.Series(["a b", "b c"]), {}, "space", output=False)
    ids, counts = transform_token_bag(pd.Series(["b b a", "q"]), meta)
    index = {t: i for i, t in enumerate(meta["idx2str"])}
    assert dict(zip(ids[0].tolist(), counts[0].tolist(), strict=True)) == {
        index["a"]: 1.0,
        index["b"]: 2.0,
    }
    assert ids[1].tolist()[0] == index[UNK]
    out = fit_tokens(pd.Series(["a b", "c"]), {}, "space", output=True)
    assert transform_multi_hot(pd.Series(["b", "a c z"]), out).tolist() == [
        [0.0, 1.0, 0.0],
        [1.0, 0.0, 1.0],
    ]


def test_unknown_tokenizer_is_refused():
    with pytest.raises(DataError, match="tokenizer 'bert'"):
        fit_tokens(pd.Series(["a"]), {"tokenizer": "bert"}, "space", output=False)


def test_missing_text_filled_with_unk_is_one_unknown_token():
    meta = fit_tokens(
        pd.Series(["a b", None]),
        {"fill_value": UNK, "lowercase": True, "tokenizer": "space_punct"},
        "space_punct",
        output=False,
    )
    assert transform_sequence(pd.Series([None]), meta).tolist()[0][0] == meta["idx2str"].index(UNK)
    assert "<" not in meta["idx2str"]
