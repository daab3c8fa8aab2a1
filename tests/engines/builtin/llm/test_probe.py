"""The probes scale exactly: shrunk copies predict a deeper model's measured memory."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from ludwig_nb.engines.builtin.llm.probe import (  # noqa: E402
    Footprint,
    ProbeSpec,
    activation_features,
    probe_footprint,
    reentrant_checkpointing,
)
from ludwig_nb.engines.builtin.llm.saved_tensors import (  # noqa: E402
    SavedTensorMeter,
    storage_bytes,
)


def _deeper(tiny: Path, folder: Path, layers: int, vocab: int | None = None) -> Path:
    """The tiny model's architecture with ``layers`` layers (and ``vocab`` tokens)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(tiny))
    config.num_hidden_layers = layers
    if getattr(config, "layer_types", None):  # one entry per layer (Qwen2)
        config.layer_types = [config.layer_types[0]] * layers
    if vocab is not None:
        config.vocab_size = vocab
    torch.manual_seed(1)
    AutoModelForCausalLM.from_config(config).save_pretrained(str(folder))
    return folder


def _measured(folder: Path, config: dict[str, Any], rows: int, tokens: int) -> tuple[int, int]:
    """(peak held for backward, weights as stored) on the real model, loaded as a run.

    The weights are taken before the first pass (bitsandbytes' CPU kernels repack 4-bit
    weights on first use; a GPU keeps them as loaded).
    """
    from ludwig_nb.engines.builtin.llm import loading

    trainer = config.get("trainer") or {}
    checkpointing = bool(trainer.get("enable_gradient_checkpointing"))
    model = loading.load_base(
        folder, config, torch.device("cpu"), gradient_checkpointing=checkpointing
    )
    model = loading.wrap_adapter(model, config.get("adapter"), 100)
    if checkpointing:
        reentrant_checkpointing(model)
    model.train()
    weights = storage_bytes(model)
    with torch.no_grad():  # bitsandbytes' CPU kernels repack 4-bit weights on first use
        model(input_ids=torch.tensor([[3, 4, 5]]))
    vocab = model.get_input_embeddings().weight.shape[0]
    ids = torch.randint(3, vocab, (rows, tokens), generator=torch.Generator().manual_seed(3))
    mask = torch.ones_like(ids)
    mask[1:, tokens // 3 :] = 0  # every row but the first padded
    labels = torch.where(mask.bool(), ids, torch.full_like(ids, -100))
    meter = SavedTensorMeter(model)
    with meter:
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
    return meter.peak, weights


CASES = {
    "lora": {"adapter": {"type": "lora", "r": 8}, "trainer": {}},
    "full": {"trainer": {}},
    "checkpointing": {
        "adapter": {"type": "lora", "r": 4},
        "trainer": {"enable_gradient_checkpointing": True},
    },
    "4-bit": {"adapter": {"type": "lora", "r": 8}, "quantization": {"bits": 4}, "trainer": {}},
}


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_shrunk_copies_predict_a_deeper_model(tiny_llm, tmp_path, arch, case):
    folder = _deeper(tiny_llm(arch), tmp_path / "deep", layers=5)
    config = CASES[case]
    found = probe_footprint(ProbeSpec(folder, config, rows=3))
    peak, weights = _measured(folder, config, rows=3, tokens=70)
    assert found.layers == 5
    assert found.activations(3, 70) == pytest.approx(peak, rel=0.005)
    assert found.weights == pytest.approx(weights, rel=0.005)
    assert found.fit_error < 1e-6


@pytest.mark.parametrize("case", ["lora", "checkpointing"])
def test_a_larger_vocabulary_is_scaled_from_two_small_ones(tiny_llm, tmp_path, case):
    folder = _deeper(tiny_llm("qwen2"), tmp_path / "wide-vocab", layers=3, vocab=9000)
    config = CASES[case]
    found = probe_footprint(ProbeSpec(folder, config, rows=2))
    peak, weights = _measured(folder, config, rows=2, tokens=40)
    assert found.vocab == 9000
    assert found.activations(2, 40) == pytest.approx(peak, rel=0.005)
    assert found.weights == pytest.approx(weights, rel=0.005)


def test_one_row_batches_have_their_own_model(tiny_llm):
    found = probe_footprint(ProbeSpec(tiny_llm("llama"), CASES["lora"], rows=1))
    assert found.one_row
    peak, _ = _measured(tiny_llm("llama"), CASES["lora"], rows=1, tokens=90)
    assert found.activations(1, 90) == pytest.approx(peak, rel=0.005)


def test_adapter_and_optimizer_states_are_counted(tiny_llm):
    lora = probe_footprint(ProbeSpec(tiny_llm("llama"), CASES["lora"], rows=2))
    full = probe_footprint(ProbeSpec(tiny_llm("llama"), CASES["full"], rows=2))
    assert 0 < lora.trainable < 0.1 * lora.parameters
    assert full.trainable == full.parameters
    assert full.gradients == 4 * full.trainable  # float32
    assert full.optimizer == 2 * full.gradients  # Adam: two states per parameter
    assert lora.optimizer == 2 * lora.gradients


def test_features_and_the_level_they_give():
    found = Footprint(
        layers=4,
        vocab=100,
        weights=0,
        gradients=0,
        optimizer=0,
        parameters=0,
        trainable=0,
        coefficients=(1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 10.0),
        one_row=False,
        fit_error=0.0,
        logits_per_token=400,
    )
    assert found.activations(2, 5) == 4 * 2 * 5 + 2 * 2 * 5 + 10
    # with checkpointing: the larger of the forward's end and the recomputation's peak
    recomputing = dataclasses.replace(found, recompute=(0.0,) * 7 + (100.0,))
    assert recomputing.activations(2, 5) == 100  # 4 layers: the forward's end holds 70
    assert dataclasses.replace(recomputing, layers=10).activations(2, 5) == 10 * 10 + 20 + 10
    assert len(activation_features(3, 1, 7, one_row=True)) == 6
    assert dataclasses.replace(found, layers=8).activations(2, 5) == 8 * 10 + 20 + 10


def test_a_config_without_a_layer_count_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(
        '{"model_type": "llama", "vocab_size": 10, "num_hidden_layers": 0}'
    )
    with pytest.raises(ValueError, match="num_hidden_layers"):
        probe_footprint(ProbeSpec(tmp_path, CASES["lora"], rows=2))
