from __future__ import annotations

import pytest

from ludwig_nb.engines.builtin.llm.tokens import (
    IGNORE_INDEX,
    collate,
    encode_rows,
    length_limits,
    padded_tokens,
)


@pytest.fixture(scope="module")
def tokenizer(tiny_llm):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_llm("llama")))


def test_rows_are_prompt_target_and_end_of_sequence(tokenizer):
    enc = encode_rows(tokenizer, ["Review: great\nSentiment:"], ["positive"])
    prompt = tokenizer("Review: great\nSentiment:")["input_ids"]
    target = tokenizer("positive", add_special_tokens=False)["input_ids"]
    assert enc.ids[0] == prompt + target + [tokenizer.eos_token_id]
    assert enc.prompt_lengths == [len(prompt)] and enc.truncated == 0


def test_limits_cut_and_count_the_rows_they_cut(tokenizer):
    prompts = ["Review: the film was great and lovely\nSentiment:", "Review: ok\nSentiment:"]
    full = encode_rows(tokenizer, prompts, ["positive", "negative"])
    cut = encode_rows(tokenizer, prompts, ["positive", "negative"], (None, None, 8))
    assert cut.lengths == [min(8, n) for n in full.lengths]
    assert cut.truncated == sum(n > 8 for n in full.lengths) > 0
    assert cut.full_lengths == full.lengths


def test_limits_come_from_the_features_and_preprocessing():
    config = {
        "input_features": [{"preprocessing": {"max_sequence_length": 30}}],
        "output_features": [{"preprocessing": {"max_sequence_length": None}}],
        "preprocessing": {"global_max_sequence_length": 64},
    }
    assert length_limits(config) == (30, None, 64)


def test_labels_read_only_the_target_and_padding_is_masked(tokenizer):
    enc = encode_rows(tokenizer, ["Review: great\nSentiment:", "R:"], ["positive", "no"])
    batch = collate(enc, [0, 1], tokenizer.pad_token_id)
    longest = max(enc.lengths)
    assert batch["input_ids"].shape == (2, longest)
    short = enc.lengths[1]
    assert batch["attention_mask"][1].tolist() == [1] * short + [0] * (longest - short)
    labels = batch["labels"][1].tolist()
    first = enc.prompt_lengths[1]
    assert labels[:first] == [IGNORE_INDEX] * first
    assert labels[first:short] == enc.ids[1][first:]
    assert labels[short:] == [IGNORE_INDEX] * (longest - short)


def test_left_padding_puts_every_row_at_the_end(tokenizer):
    enc = encode_rows(tokenizer, ["Review: great\nSentiment:", "R:"], None)
    batch = collate(enc, [0, 1], tokenizer.pad_token_id, left=True)
    assert batch["input_ids"][1, -enc.lengths[1] :].tolist() == enc.ids[1]


def test_padded_tokens_are_rows_times_the_longest_of_each_batch():
    assert padded_tokens([3, 5, 2, 7, 1], [0, 1, 2, 3, 4], 2) == [10, 14, 1]
    assert padded_tokens([3, 5, 2, 7, 1], [4, 2, 0, 1, 3], 2) == [4, 10, 7]
