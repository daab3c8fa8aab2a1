"""The tiny offline LLM fixture builds loadable checkpoints of each architecture."""

from __future__ import annotations

import pytest

from tests.fixtures.llm.tiny import ARCHITECTURES, sentiment_frame


@pytest.mark.parametrize("arch", sorted(ARCHITECTURES))
def test_each_architecture_loads_and_runs(tiny_llm, arch):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_llm(arch)
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path))
    ids = tok("Review: the film was great\nSentiment:", return_tensors="pt").input_ids
    assert tok.decode(ids[0]) == "Review: the film was great\nSentiment:"
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape == (1, ids.shape[1], len(tok))
    assert tok.pad_token_id != tok.eos_token_id
    assert model.config.model_type == arch


def test_the_same_seed_gives_the_same_weights(tiny_llm, tmp_path):
    from safetensors.torch import load_file

    from tests.fixtures.llm.tiny import build_tiny_llm

    again = build_tiny_llm(tmp_path / "again", "llama")
    first = load_file(str(tiny_llm("llama") / "model.safetensors"))
    second = load_file(str(again / "model.safetensors"))
    assert first.keys() == second.keys()
    assert all(bool((first[k] == second[k]).all()) for k in first)


def test_sentiment_labels_follow_the_adjective():
    df = sentiment_frame(50, seed=3)
    assert set(df["label"]) == {"positive", "negative"}
    assert df.equals(sentiment_frame(50, seed=3))
