"""An LLM cell in a real kernel: the magic trains, the handle predicts, saves and reloads."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("peft")


@pytest.mark.slow
def test_an_llm_cell_trains_predicts_saves_and_reloads(tiny_llm, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    base = tiny_llm("llama")
    config = f"""%%ludwig_config --dataset df --name sentiment --wait
model_type: llm
base_model: {base}
input_features: [{{name: review, type: text}}]
output_features: [{{name: label, type: text}}]
prompt: {{template: "Review: {{review}}\\nSentiment:"}}
adapter: {{type: lora, r: 4}}
generation: {{max_new_tokens: 4, do_sample: false}}
trainer: {{type: finetune, epochs: 1, batch_size: 16, learning_rate: 0.003}}
"""
    cells = [
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n%load_ext ludwig_nb\n"
        f"%config LudwigMagics.results_dir = {str(tmp_path / 'results')!r}",
        "from tests.fixtures.llm.tiny import sentiment_frame\ndf = sentiment_frame(64)",
        config,
        "import json\nout = sentiment.model.predict(df.head(4))\n"
        "print(json.dumps({'status': sentiment.status, "
        "'columns': list(out.columns), 'answers': list(out['label_response'])}))",
        f"folder = sentiment.model.save({str(tmp_path / 'saved')!r})\n"
        "import ludwig_nb\nagain = ludwig_nb.load_model(folder)\n"
        "print(json.dumps(list(again.predict(df.head(4))['label_response'])))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    trained = json.loads(_stdout(nb.cells[3]))
    assert trained["status"] == "completed"
    assert "label_response" in trained["columns"]
    assert json.loads(_stdout(nb.cells[4])) == trained["answers"]
    assert any((tmp_path / "results").glob("sentiment*/model/model_weights"))
    said = "".join(o.get("text", "") for c in nb.cells for o in c.outputs)
    assert "Warning" not in said  # no third-party warning reaches the notebook


def _stdout(cell) -> str:
    texts = [o["text"] for o in cell.outputs if o.get("name") == "stdout"]
    return "".join(texts).strip().splitlines()[-1]
