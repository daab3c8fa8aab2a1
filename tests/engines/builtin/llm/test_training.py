"""The LLM engine's runs on tiny offline models: learning, events, control, checkpoints."""

from __future__ import annotations

import math

import pytest
import torch

from ludwig_nb.core.control import RunControl
from ludwig_nb.engines.builtin import memory
from tests.engines.builtin.llm.conftest import llm_config
from tests.fixtures.llm.tiny import sentiment_frame


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_a_full_fine_tune_learns_a_two_label_task(tiny_llm, run_engine, arch):
    config = llm_config(tiny_llm(arch), trainer={"epochs": 3})
    result = run_engine(config, sentiment_frame(600))
    final = result.of("evaluation_finished")[-1].metrics
    assert final["test"]["label"]["sequence_accuracy"] == 1.0
    assert final["test"]["label"]["loss"] < 0.1
    samples = result.of("samples_generated")[-1].samples
    assert [s["generated"] for s in samples] == [s["expected"] for s in samples]
    described = result.of("model_described")[0]
    assert described.trainable == described.total > 100_000
    assert described.architecture == arch
    assert result.of("run_finished")[0].status == "completed"


def test_each_step_counts_its_tokens_as_the_epoch_plan_said(tiny_llm, run_engine):
    result = run_engine(llm_config(tiny_llm("llama"), trainer={"epochs": 2}), sentiment_frame(80))
    steps = result.of("step_finished")
    planned = result.of("epoch_planned")
    assert [p.first_step for p in planned] == [0, len(steps) // 2]
    assert [s.padded_tokens for s in steps] == [t for p in planned for t in p.padded_tokens]
    assert [s.tokens for s in steps] == [t for p in planned for t in p.tokens]
    assert all(0 < s.tokens <= s.padded_tokens for s in steps)
    assert any(s.tokens < s.padded_tokens for s in steps)  # rows differ in length
    counted = result.of("tokens_counted")[0].splits["training"]
    assert sum(s.tokens for s in steps) == 2 * counted["tokens"]


def test_lora_trains_and_checkpoints_only_the_adapter(tiny_llm, run_engine):
    config = llm_config(tiny_llm("gpt2"), adapter={"type": "lora", "r": 4})
    result = run_engine(config, sentiment_frame(64))
    described = result.of("model_described")[0]
    assert 0 < described.trainable < described.total / 20
    state = torch.load(result.run_dir / "checkpoints" / "latest.ckpt", weights_only=True)
    assert state["model"] and all("lora_" in name for name in state["model"])
    assert sum(t.numel() for t in state["model"].values()) == described.trainable
    losses = [s.loss for s in result.of("step_finished")]
    assert all(math.isfinite(x) for x in losses) and losses[0] != losses[-1]


@pytest.mark.parametrize("kind", ["adalora", "ia3"])
def test_other_adapters_train(tiny_llm, run_engine, kind):
    config = llm_config(tiny_llm("llama"), adapter={"type": kind})
    result = run_engine(config, sentiment_frame(48))
    described = result.of("model_described")[0]
    assert described.adapter == kind and 0 < described.trainable < described.total
    assert result.of("run_finished")[0].status == "completed"


def test_four_bit_lora_trains_on_the_cpu(tiny_llm, run_engine):
    config = llm_config(
        tiny_llm("llama"),
        adapter={"type": "lora", "r": 4},
        quantization={"bits": 4, "bnb_4bit_compute_dtype": "float32"},
    )
    result = run_engine(config, sentiment_frame(48))
    described = result.of("model_described")[0]
    assert described.quantization == "4-bit"
    assert all(math.isfinite(s.loss) for s in result.of("step_finished"))


def test_a_stop_ends_at_a_step_boundary_with_a_checkpoint_and_a_model(tiny_llm, run_engine):
    control = RunControl()

    def on_event(event):
        if event.type == "step_finished" and event.step == 2:
            control.stop()

    result = run_engine(
        llm_config(tiny_llm("llama")), sentiment_frame(160), control=control, on_event=on_event
    )
    assert result.of("run_finished")[0].status == "stopped"
    assert [s.step for s in result.of("step_finished")] == [0, 1, 2]
    assert (result.run_dir / "checkpoints" / "latest.ckpt").is_file()
    assert (result.run_dir / "model" / "ludwig_nb_model.json").is_file()


def test_a_pause_is_reported_and_resumed(tiny_llm, run_engine):
    control = RunControl()

    def on_event(event):
        if event.type == "step_finished" and event.step == 1:
            control.pause()
        if event.type == "paused":
            control.resume()

    result = run_engine(
        llm_config(tiny_llm("llama")), sentiment_frame(80), control=control, on_event=on_event
    )
    assert [e.step for e in result.of("paused")] == [2]
    assert [e.step for e in result.of("resumed")] == [2]
    assert result.of("run_finished")[0].status == "completed"


def test_a_resumed_run_continues_where_it_stopped(tiny_llm, run_engine, tmp_path):
    config = llm_config(tiny_llm("llama"), trainer={"epochs": 2})
    data = sentiment_frame(96)
    whole = run_engine(config, data)
    control = RunControl()

    def on_event(event):
        if event.type == "step_finished" and event.step == 4:
            control.stop()

    first = run_engine(config, data, control=control, on_event=on_event)
    second = run_engine(config, data, resume_from=first.run_dir)
    assert second.of("run_started")[0].start_step == 5
    expected = [s.loss for s in whole.of("step_finished")][5:]
    resumed = [s.loss for s in second.of("step_finished")]
    assert resumed == pytest.approx(expected, rel=1e-5)


def test_out_of_memory_splits_batches_then_checkpoints_gradients(tiny_llm, run_engine, monkeypatch):
    calls = {"n": 0}

    def hook(step, rows):
        if step == 1 and rows > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")
        if step == 1 and rows == 1 and calls["n"] == 0:
            calls["n"] += 1
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")

    monkeypatch.setattr(memory, "fault_hook", hook)
    config = llm_config(
        tiny_llm("llama"), trainer={"batch_size": 4}, gpu_watch={"oom_recovery": True}
    )
    result = run_engine(config, sentiment_frame(40))
    messages = [e.message for e in result.of("oom_recovered")]
    assert [e.micro_batch_size for e in result.of("oom_recovered")] == [2, 1, 1]
    assert "gradient checkpointing is on" in messages[-1]
    assert result.of("run_finished")[0].status == "completed"


def test_out_of_memory_without_recovery_says_what_to_change(tiny_llm, run_engine, monkeypatch):
    def hook(step, rows):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")

    monkeypatch.setattr(memory, "fault_hook", hook)
    config = llm_config(tiny_llm("llama"), gpu_watch={"oom_recovery": False})
    with pytest.raises(memory.OutOfMemory, match=r"quantization: \{bits: 4\}"):
        run_engine(config, sentiment_frame(40))


def test_early_stopping_ends_a_run_that_stops_improving(tiny_llm, run_engine):
    config = llm_config(
        tiny_llm("llama"),
        trainer={"epochs": 5, "learning_rate": 0.0, "early_stop": 1, "steps_per_checkpoint": 1},
    )
    result = run_engine(config, sentiment_frame(80))
    assert len(result.of("evaluation_finished")) == 2
    assert result.of("schedule_changed")[0].reason == "early stopping"
    assert result.of("run_finished")[0].reason == "early stopping"


def test_zero_shot_evaluates_and_generates_without_training(tiny_llm, run_engine):
    config = llm_config(tiny_llm("gpt2"), trainer={"type": "none"})
    result = run_engine(config, sentiment_frame(40))
    assert result.of("run_started")[0].schedule.total_steps == 0
    assert not result.of("step_finished")
    assert "sequence_accuracy" in result.of("evaluation_finished")[0].metrics["test"]["label"]
    shown = result.of("samples_generated")[0]
    assert shown.split == "validation"
    assert len(shown.samples) == min(5, result.of("tokens_counted")[0].splits["validation"]["rows"])
    assert result.of("model_described")[0].trainable == 0
    assert list(result.model.predict(sentiment_frame(3)).columns) == [
        "label_predictions",
        "label_probabilities",
        "label_probability",
        "label_response",
    ]


def test_truncation_is_counted_not_silent(tiny_llm, run_engine):
    config = llm_config(tiny_llm("llama"), preprocessing={"global_max_sequence_length": 8})
    result = run_engine(config, sentiment_frame(40))
    counted = result.of("tokens_counted")[0]
    assert counted.limit == 8
    assert counted.splits["training"]["longest"] == 8
    assert counted.splits["training"]["truncated"] > 0
    assert counted.splits["training"]["longest_before"] > 8


def test_a_local_base_model_never_opens_a_connection(tiny_llm, run_engine, monkeypatch):
    import socket

    tried = []

    def refuse(self, address):
        tried.append(address)
        raise ConnectionRefusedError("no network in this test")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    config = llm_config(tiny_llm("qwen2"), adapter={"type": "lora", "r": 4})
    result = run_engine(config, sentiment_frame(32))
    result.model.predict(sentiment_frame(2))
    assert result.of("run_finished")[0].status == "completed"
    assert tried == []
