"""The opt-in torch.profiler capture: a bounded window, a trace and a top-ops table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.engines.builtin.capture import TOP_OPS_FILE, TRACE_FILE
from ludwig_nb.runs import train

CONFIG = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2, batch_size: 16}
gpu_watch: {enabled: false}
"""


@pytest.fixture
def df():
    rng = np.random.default_rng(0)
    a = rng.normal(size=300)
    return pd.DataFrame({"a": a, "y": a > 0})


def _train(df, tmp_path, **kwargs):
    return train(
        CONFIG,
        df,
        results_dir=tmp_path / "r",
        registry_dir=tmp_path / "reg",
        threads=1,
        wait=True,
        **kwargs,
    )


def test_profile_steps_writes_a_chrome_trace_and_the_top_ops(df, tmp_path):
    run = _train(df, tmp_path, profile_steps=3)
    assert run.status == "completed", run.error
    trace = json.loads((run.directory / TRACE_FILE).read_text())
    assert trace["traceEvents"]  # a Chrome / Perfetto trace
    steps = [e for e in trace["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep")]
    assert len(steps) == 3  # the active window only: never the whole run
    ops = run.top_ops
    assert {"name", "calls", "self_cpu_s", "cpu_total_s", "self_device_s"} <= set(ops)
    assert any("addmm" in name or "linear" in name for name in ops["name"])
    assert ops["self_cpu_s"].is_monotonic_decreasing
    assert json.loads((run.directory / TOP_OPS_FILE).read_text())["steps"] == 3


def test_without_profile_steps_there_is_no_capture(df, tmp_path):
    run = _train(df, tmp_path)
    assert not (run.directory / TRACE_FILE).exists()
    with pytest.raises(FileNotFoundError, match="profile_steps=N"):
        run.top_ops


def test_a_negative_profile_steps_is_refused_before_training(df, tmp_path):
    with pytest.raises(ValueError, match="profile_steps must be"):
        _train(df, tmp_path, profile_steps=-1)


def test_an_llm_fine_tune_is_profiled_through_train(tiny_llm, tmp_path):
    pytest.importorskip("peft", reason="the built-in LLM engine needs the [llm] extra")
    from tests.fixtures.llm.tiny import sentiment_frame

    config = f"""\
model_type: llm
base_model: {tiny_llm("llama")}
input_features: [{{name: review, type: text}}]
output_features: [{{name: label, type: text}}]
prompt: {{template: "Review: {{review}} Sentiment:"}}
generation: {{max_new_tokens: 2}}
trainer: {{type: finetune, epochs: 1, batch_size: 4, learning_rate: 0.001}}
"""
    run = train(
        config,
        sentiment_frame(48),
        results_dir=tmp_path / "r",
        registry_dir=tmp_path / "reg",
        threads=1,
        wait=True,
        profile_steps=2,
    )
    assert run.status == "completed", run.error
    trace = json.loads((run.directory / TRACE_FILE).read_text())
    steps = [e for e in trace["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep")]
    assert len(steps) == 2
    assert any("mm" in name or "linear" in name for name in run.top_ops["name"])
