"""Saved LLMs: Ludwig's folder layout, a fresh process gives the same greedy answers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ludwig_nb.engines.builtin.llm.model_io import base_fingerprint
from tests.engines.builtin.llm.conftest import llm_config
from tests.fixtures.llm.tiny import sentiment_frame

ROOT = Path(__file__).resolve().parents[4]


def _answers_in_a_fresh_process(folder: Path, rows: int) -> list[str]:
    script = textwrap.dedent(
        f"""
        import json, ludwig_nb
        from tests.fixtures.llm.tiny import sentiment_frame
        model = ludwig_nb.load_model({str(folder)!r})
        out = model.predict(sentiment_frame({rows}, seed=7))
        print(json.dumps(list(out["label_response"])))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def lora_run(tiny_llm, tmp_path_factory):
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    config = llm_config(tiny_llm("llama"), adapter={"type": "lora", "r": 4, "alpha": 16})
    run_dir = tmp_path_factory.mktemp("lora-run")
    job = TrainJob(config, sentiment_frame(64), run_dir, "r", "t")
    model = BuiltinEngine().fit(job, lambda e: None, RunControl())
    return model, run_dir


def test_the_folder_holds_the_adapter_and_a_reference_to_its_base(lora_run, tiny_llm):
    _, run_dir = lora_run
    folder = run_dir / "model"
    assert json.loads((folder / "ludwig_nb_model.json").read_text())["kind"] == "llm"
    weights = folder / "model_weights"
    assert (weights / "adapter_config.json").is_file()
    assert (weights / "adapter_model.safetensors").stat().st_size < (
        tiny_llm("llama") / "model.safetensors"
    ).stat().st_size / 10
    base = json.loads((folder / "base_model.json").read_text())
    assert base["fingerprint"] == base_fingerprint(tiny_llm("llama"))
    assert json.loads((folder / "model_hyperparameters.json").read_text())["model_type"] == "llm"


def test_a_fresh_process_gives_the_same_greedy_answers(lora_run):
    model, run_dir = lora_run
    here = list(model.predict(sentiment_frame(6, seed=7))["label_response"])
    assert _answers_in_a_fresh_process(run_dir / "model", 6) == here


def test_a_changed_base_model_is_refused(lora_run, tiny_llm, tmp_path):
    from ludwig_nb.engines.builtin.llm.model_io import load_llm_model
    from tests.fixtures.llm.tiny import build_tiny_llm

    _, run_dir = lora_run
    other = build_tiny_llm(tmp_path / "other", "llama", seed=1)
    body = json.loads((run_dir / "model" / "base_model.json").read_text())
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(run_dir / "model"), str(copy)], check=True)
    (copy / "base_model.json").write_text(json.dumps({**body, "path": str(other)}))
    with pytest.raises(ValueError, match="fingerprint mismatch"):
        load_llm_model(copy)


def test_merging_saves_the_whole_model_with_the_same_answers(tiny_llm, run_engine, tmp_path):
    config = llm_config(
        tiny_llm("gpt2"),
        adapter={"type": "lora", "r": 4, "postprocessor": {"merge_adapter_into_base_model": True}},
    )
    result = run_engine(config, sentiment_frame(48))
    weights = result.run_dir / "model" / "model_weights"
    assert (weights / "model.safetensors").is_file()
    assert not (weights / "adapter_config.json").exists()
    here = list(result.model.predict(sentiment_frame(5, seed=7))["label_response"])
    assert _answers_in_a_fresh_process(result.run_dir / "model", 5) == here


def test_evaluate_gives_ludwigs_llm_metrics(lora_run):
    model, _ = lora_run
    metrics = model.evaluate(sentiment_frame(20, seed=3))
    assert set(metrics["label"]) == {
        "loss",
        "perplexity",
        "next_token_perplexity",
        "token_accuracy",
        "sequence_accuracy",
    }
    assert metrics["combined"]["loss"] == metrics["label"]["loss"]
