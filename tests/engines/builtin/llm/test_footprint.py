"""The LLM memory pre-flight: parts, GPUs, advice, the data's longest row, offline failure."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("peft")

from ludwig_nb.core.memory_estimate import GPUS, PARTS
from ludwig_nb.engines.builtin.llm.footprint import (
    CUDA_CONTEXT_BYTES,
    DeviceMemory,
    estimate_for_run,
    estimate_memory,
    this_device,
    train_flops,
)
from ludwig_nb.engines.builtin.llm.probe import Footprint
from tests.engines.builtin.llm.conftest import llm_config
from tests.fixtures.llm.tiny import sentiment_frame

NO_GPU = DeviceMemory("no GPU on this machine")
MIB = 1 << 20


def _longest(config, frame, path):
    from ludwig_nb.engines.builtin.llm import loading
    from ludwig_nb.engines.builtin.llm.data import split_frames, texts

    tokenizer = loading.load_tokenizer(path)
    training = split_frames(config, frame, 42)["training"]
    return max(texts(config, training, tokenizer).encoded.lengths)


def test_an_estimate_has_every_part_and_the_gpus(tiny_llm):
    base = tiny_llm("llama")
    config = llm_config(base, adapter={"type": "lora", "r": 8}, trainer={"batch_size": 8})
    frame = sentiment_frame(200)
    est = estimate_memory(config, frame, device=NO_GPU)
    assert tuple(est.parts) == PARTS
    assert est.total_bytes == sum(est.parts.values())
    assert est.parts["cuda_context"] == CUDA_CONTEXT_BYTES
    assert all(est.parts[p] > 0 for p in ("weights", "gradients", "optimizer", "activations"))
    assert est.sequence_length == _longest(config, frame, base)
    assert est.batch_size == 8
    assert 0 < est.trainable < est.parameters
    assert [g.name for g in est.gpus] == [g.name for g in GPUS]
    assert all(g.fits and g.train_s is not None and g.train_s > 0 for g in est.gpus)
    assert est.advice == ()
    assert est.fits_here is None
    assert "no GPU" in str(est)
    assert any("scaled" in note for note in est.notes)


def test_longer_rows_and_more_of_them_need_more(tiny_llm):
    base = tiny_llm("gpt2")
    short = estimate_memory(
        llm_config(base, trainer={"batch_size": 4}), lengths=[20] * 50, path=base, device=NO_GPU
    )
    long = estimate_memory(
        llm_config(base, trainer={"batch_size": 4}),
        lengths=[20] * 49 + [200],
        path=base,
        device=NO_GPU,
    )
    wide = estimate_memory(
        llm_config(base, trainer={"batch_size": 16}), lengths=[20] * 50, path=base, device=NO_GPU
    )
    assert long.sequence_length == 200  # the longest row, not the mean
    assert long.parts["activations"] > 5 * short.parts["activations"]
    assert wide.parts["activations"] > 3 * short.parts["activations"]
    assert long.parts["weights"] == short.parts["weights"]


def test_advice_where_it_does_not_fit(tiny_llm):
    base = tiny_llm("llama")
    config = llm_config(base, adapter={"type": "lora", "r": 8}, trainer={"batch_size": 8})
    lengths = [10] * 95 + [60] * 5
    small = DeviceMemory("a small GPU", total_bytes=100 * MIB + 1024, context_bytes=100 * MIB)
    est = estimate_memory(config, lengths=lengths, path=base, device=small)
    assert est.fits_here is False
    changes = " | ".join(a.change for a in est.advice)
    assert "enable_gradient_checkpointing: true" in changes
    assert "batch_size: 4, gradient_accumulation_steps: 2" in changes
    assert "global_max_sequence_length: 10" in changes
    assert "quantization: {bits: 4}" in changes
    assert all(a.total_bytes < est.total_bytes for a in est.advice)
    assert "does NOT fit" in str(est)


def test_full_fine_tuning_counts_every_weight_twice_more(tiny_llm):
    base = tiny_llm("qwen2")
    est = estimate_memory(
        llm_config(base, trainer={"batch_size": 2}), lengths=[30] * 10, path=base, device=NO_GPU
    )
    assert est.trainable == est.parameters
    assert est.parts["gradients"] == 4 * est.parameters  # float32 gradients of every weight
    assert est.parts["weights"] >= est.parts["gradients"]  # the weights, and the buffers
    assert est.parts["optimizer"] == 2 * est.parts["gradients"]  # Adam's two states


def test_a_hub_model_offline_fails_fast_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    config = {"base_model": "someone/not-cached-model", "trainer": {"batch_size": 2}}
    began = time.monotonic()
    with pytest.raises(RuntimeError, match="someone/not-cached-model"):
        estimate_memory(config, lengths=[10], device=NO_GPU)
    assert time.monotonic() - began < 10.0


def test_a_run_shows_its_estimate_on_a_gpu_only_and_never_fails(tiny_llm, tmp_path, caplog):
    import torch

    base = tiny_llm("llama")
    config = llm_config(base, adapter={"type": "lora", "r": 4}, trainer={"batch_size": 4})
    assert estimate_for_run(config, [12] * 8, base, torch.device("cpu")) is None
    total = estimate_for_run(config, [12] * 8, base, torch.device("cpu"), force=True)
    assert isinstance(total, int) and total > CUDA_CONTEXT_BYTES
    (tmp_path / "config.json").write_text("{not json")
    assert estimate_for_run(config, [12], tmp_path, torch.device("cpu"), force=True) is None
    assert "no memory estimate" in caplog.text


def test_flops_per_token_follow_the_parameters():
    found = Footprint(
        12,
        100,
        0,
        0,
        0,
        parameters=1000,
        trainable=10,
        coefficients=(),
        one_row=False,
        fit_error=0.0,
        logits_per_token=400,
    )
    assert train_flops(found, 5, checkpointing=False) == 5 * (4 * 1000 + 2 * 10)
    assert train_flops(found, 5, checkpointing=True) == 5 * (6 * 1000 + 2 * 10)


def test_this_machine_says_when_it_has_no_gpu():
    import torch

    found = this_device()
    if torch.cuda.is_available():
        assert found.total_bytes is not None and found.total_bytes > 0
    else:
        assert found.total_bytes is None
        assert "no GPU" in found.name


def test_the_engine_estimates_llm_configs_only(tiny_llm):
    from ludwig_nb.engines.builtin import BuiltinEngine
    from tests.engines.builtin.conftest import make_config

    ecd = make_config([{"name": "x", "type": "number"}], [{"name": "y", "type": "binary"}])
    assert BuiltinEngine().estimate_memory(ecd, None) is None
    config = llm_config(tiny_llm("llama"), trainer={"batch_size": 2})
    est = BuiltinEngine().estimate_memory(config, sentiment_frame(40))
    assert est is not None and est.total_bytes > 0
