"""Vocabularies, tokenizers and sequence lengths."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.builtin.preprocessing.vocab import (
    PAD,
    START,
    STOP,
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
    train = pd.Series(["b", "a", "b", "c ", "b", "a"])
    # more values than most_common: <UNK> first, the rest read as it
    meta = fit_category(train, {"most_common": 2}, output=False)
    assert meta["idx2str"] == [UNK, "b", "a"]
    assert transform_category(pd.Series(["a", "c", "zzz"]), meta).tolist() == [2, 0, 0]
    # otherwise only the values (stripped), as Ludwig: an unseen input is the most frequent one
    inputs = fit_category(train, {}, output=False)
    assert inputs["idx2str"] == ["b", "a", "c"]
    assert transform_category(pd.Series(["c", "zzz"]), inputs).tolist() == [2, 0]
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


def test_text_vocabulary_framing_and_max_sequence_length():
    train = pd.Series(["The cat sat", "the DOG", None])
    meta = fit_tokens(train, {"lowercase": True, "max_sequence_length": 4}, "space", "sequence")
    # Ludwig's special symbols first, then the tokens by frequency
    assert meta["idx2str"][:5] == [STOP, START, PAD, UNK, "the"]
    assert meta["max_sequence_length"] == 4  # the limit: the longest row + 2 is 5
    ids = transform_sequence(pd.Series(["THE cat bird sat", "dog"]), meta)
    index = {t: i for i, t in enumerate(meta["idx2str"])}
    sos, eos, pad = index[START], index[STOP], index[PAD]
    assert ids.tolist() == [
        [sos, index["the"], index["cat"], index[UNK]],  # cut at the limit, <EOS> too
        [sos, index["dog"], eos, pad],
    ]
    longest = fit_tokens(train, {"max_sequence_length": 256}, "space", "sequence")
    assert longest["max_sequence_length"] == 5  # the longest row + <SOS> and <EOS>


def test_left_padding():
    meta = fit_tokens(pd.Series(["a b c"]), {"padding": "left"}, "space", "sequence")
    ids = transform_sequence(pd.Series(["b"]), meta)
    index = {t: i for i, t in enumerate(meta["idx2str"])}
    assert ids.tolist() == [[index[PAD]] * 2 + [index[START], index["b"], index[STOP]]]


def test_set_and_bag_encodings():
    meta = fit_tokens(pd.Series(["a b", "b c"]), {}, "space", "bag")
    assert meta["idx2str"][:4] == [STOP, START, PAD, UNK]
    ids, counts = transform_token_bag(pd.Series(["b b a", "q"]), meta)
    index = {t: i for i, t in enumerate(meta["idx2str"])}
    assert dict(zip(ids[0].tolist(), counts[0].tolist(), strict=True)) == {
        index["a"]: 1.0,
        index["b"]: 2.0,
    }
    assert ids[1].tolist()[0] == index[UNK]
    # a set vocabulary holds only <UNK> (fourth, as Ludwig places it), for outputs too
    out = fit_tokens(pd.Series(["a b", "c a", "a"]), {}, "space", "set")
    assert out["idx2str"] == ["a", "b", "c", UNK]
    assert transform_multi_hot(pd.Series(["b", "a c z"]), out).tolist() == [
        [0.0, 1.0, 0.0, 0.0],
        [1.0, 0.0, 1.0, 1.0],
    ]


def test_unknown_tokenizer_is_refused():
    with pytest.raises(DataError, match="tokenizer 'bert'"):
        fit_tokens(pd.Series(["a"]), {"tokenizer": "bert"}, "space", "sequence")


def test_missing_text_filled_with_unk_is_tokenized_as_ludwig_does():
    meta = fit_tokens(
        pd.Series(["a b", None]),
        {"fill_value": UNK, "tokenizer": "space_punct"},
        "space_punct",
        "sequence",
    )
    # space_punct splits the fill value "<UNK>" into "<", "UNK", ">", as in Ludwig
    assert {"<", "UNK", ">"} <= set(meta["idx2str"])
    assert meta["max_sequence_length"] == 5
