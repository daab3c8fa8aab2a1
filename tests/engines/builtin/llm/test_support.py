"""What of Ludwig's LLM schema the built-in engine runs; the rest is refused at its line."""

from __future__ import annotations

import pytest

from ludwig_nb.config import UnsupportedByEngine, load_config
from ludwig_nb.engines.builtin.capabilities import check_builtin

HEAD = """model_type: llm
base_model: some/model
input_features: [{name: review, type: text}]
output_features: [{name: label, type: text}]
"""


def test_a_full_llm_config_is_accepted():
    check_builtin(
        load_config(
            HEAD
            + """prompt: {template: "Review: {review}\\nSentiment:"}
adapter: {type: lora, r: 16, alpha: 32, dropout: 0.1, target_modules: [q_proj, v_proj]}
quantization: {bits: 4, bnb_4bit_quant_type: nf4}
generation: {max_new_tokens: 8, do_sample: false, num_beams: 2, repetition_penalty: 1.1}
model_parameters: {neftune_noise_alpha: 5}
trust_remote_code: false
trainer:
  type: finetune
  epochs: 3
  batch_size: auto
  gradient_accumulation_steps: 4
  learning_rate: 0.0002
  learning_rate_scheduler: {decay: cosine, warmup_fraction: 0.03}
  optimizer: {type: adamw}
  enable_gradient_checkpointing: true
  use_mixed_precision: true
preprocessing: {global_max_sequence_length: 256}
"""
        )
    )


@pytest.mark.parametrize(
    ("extra", "line", "path", "words"),
    [
        ("prompt: {retrieval: {type: semantic, k: 3}}\n", 5, "prompt.retrieval.type", "few-shot"),
        ("adapter: {type: lora, pretrained_adapter_weights: x/y}\n", 5, None, "pretrained"),
        ("trainer: {type: finetune, compile: true}\n", 5, "trainer.compile", "torch.compile"),
        ("trainer: {type: finetune, learning_rate: auto}\n", 5, None, "learning-rate search"),
    ],
)
def test_what_is_not_built_is_named_at_its_line(extra, line, path, words):
    with pytest.raises(UnsupportedByEngine) as info:
        check_builtin(load_config(HEAD + extra))
    err = info.value
    assert err.line == line and words in err.message
    assert path is None or err.path == path
    assert err.engine == "ludwig"


def test_without_the_llm_extra_it_says_what_to_install(monkeypatch):
    import importlib.util

    from ludwig_nb.engines.base import EngineUnavailable

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a)
    )
    with pytest.raises(EngineUnavailable, match=r'pip install "ludwig_nb\[llm\]"'):
        check_builtin(load_config(HEAD))


def test_quantization_is_off_unless_written_and_remote_code_is_not_trusted():
    cfg = load_config(HEAD).to_dict()
    assert cfg["quantization"] is None and cfg["model_parameters"] is None  # as Ludwig renders
    assert cfg["trust_remote_code"] is False
    assert load_config(HEAD + "trust_remote_code: true\n").to_dict()["trust_remote_code"] is True
