"""``ludwig-nb`` on LLM configs: train (profiled), evaluate, predict, compare; a missing model."""

import json

import pandas as pd
import pytest

from ludwig_nb.cli import main

pytest.importorskip("peft", reason="the built-in LLM engine needs the [llm] extra")


def _config(base: str) -> str:
    return f"""\
model_type: llm
base_model: {base}
input_features: [{{name: review, type: text}}]
output_features: [{{name: label, type: text}}]
prompt: {{template: "Review: {{review}} Sentiment:"}}
generation: {{max_new_tokens: 2}}
adapter: {{type: lora, r: 4}}
trainer: {{type: finetune, epochs: 1, batch_size: 4, learning_rate: 0.003}}
"""


def test_an_llm_trains_evaluates_predicts_and_compares_from_the_command_line(
    tiny_llm, tmp_path, monkeypatch, capsys
):
    from tests.fixtures.llm.tiny import sentiment_frame

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    config, data, out = tmp_path / "llm.yaml", tmp_path / "reviews.csv", tmp_path / "results"
    config.write_text(_config(str(tiny_llm("gpt2"))))
    sentiment_frame(40).to_csv(data, index=False)
    argv = ["train", "-c", str(config), "-d", str(data), "-o", str(out), "--no-progress"]
    code = main([*argv, "--profile-steps", "2"])
    printed = capsys.readouterr().out
    assert code == 0 and printed.startswith("completed: "), printed[-800:]
    assert any(line.split()[:2] == ["label", "perplexity"] for line in printed.splitlines())
    (run_dir,) = out.iterdir()
    assert (run_dir / "torch_trace.json").is_file()  # --profile-steps reached the LLM loop

    assert main(["evaluate", "-m", str(run_dir), "-d", str(data), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["label"]["perplexity"] > 1.0

    predictions = tmp_path / "p.csv"
    assert main(["predict", "-m", str(run_dir), "-d", str(data), "--output", str(predictions)]) == 0
    assert len(pd.read_csv(predictions)["label_predictions"]) == 40

    config.write_text(config.read_text().replace("learning_rate: 0.003", "learning_rate: 0.001"))
    assert main(argv) == 0
    capsys.readouterr()
    runs = sorted(str(p) for p in out.iterdir())
    assert main(["compare", "--json", *runs]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["config"] == {"trainer.learning_rate": [0.003, 0.001]}
    assert any(row["metric"] == "validation.label.perplexity" for row in compared["rows"])


def test_a_base_model_that_cannot_be_had_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config, data = tmp_path / "llm.yaml", tmp_path / "two.csv"
    config.write_text(_config("ludwig-nb-tests/no-such-model"))
    pd.DataFrame({"review": ["good", "bad"], "label": ["positive", "negative"]}).to_csv(data)
    code = main(["train", "-c", str(config), "-d", str(data), "-o", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert "'ludwig-nb-tests/no-such-model' is not in the local Hugging Face cache" in err
    assert "Traceback" not in err and "split is empty" not in err
