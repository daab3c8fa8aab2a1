"""Render an LLM run's views as PNGs with headless Chromium (the README's LLM screenshot).

    python scripts/screenshots/llm.py [OUT_DIR]   # default artifacts/screenshots

A real run: a tiny offline Llama (tests/fixtures/llm/tiny.py) fully fine-tuned on the
two-label review task, with the simulated GPU for the gauges. Shot: the live view halfway
through (tokens/s, the model's facts, the generated answers beside the expected ones) and
the final summary. The widget dashboard itself shows the same panel (``lnb-llm``); a
JupyterLab screenshot of it comes from the browser tests' artifacts.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from html_shot import shoot

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import ludwig_nb  # noqa: E402
from ludwig_nb.core.state import reduce_all  # noqa: E402
from ludwig_nb.ui.charts.curves import CurveData  # noqa: E402
from ludwig_nb.ui.summary import summary_html  # noqa: E402
from ludwig_nb.ui.text_view import render_html  # noqa: E402
from ludwig_nb.ui.throughput import ThroughputMeter  # noqa: E402
from tests.fixtures.llm.tiny import build_tiny_llm, sentiment_frame  # noqa: E402

CONFIG = """model_type: llm
base_model: {base}
input_features: [{{name: review, type: text}}]
output_features: [{{name: label, type: text}}]
prompt: {{template: "Review: {{review}}\\nSentiment:"}}
generation: {{max_new_tokens: 4, do_sample: false}}
trainer: {{type: finetune, epochs: 3, batch_size: 16, learning_rate: 0.003,
          optimizer: {{type: adamw}}, checkpoints_per_epoch: 2}}
gpu_watch: {{simulate: true, interval: 0.25}}
"""


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "artifacts/screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = build_tiny_llm(Path(tmp) / "tiny-llama", "llama")
        run = ludwig_nb.train(
            CONFIG.format(base=base),
            sentiment_frame(600),
            name="sentiment-llm",
            results_dir=tmp,
            registry_dir=Path(tmp) / "reg",
            wait=True,
        )
        events = list(run.events)
        evaluations = [i for i, e in enumerate(events) if e.type == "samples_generated"]
        half = events[: evaluations[1] + 1]
        meter = ThroughputMeter(window_s=1e9)
        for event in half:
            meter.observe(event)
        live = render_html(reduce_all(half), "about 10 s", meter.samples_per_s, meter.tokens_per_s)
        shoot(live, out / "llm_live.png", width=1100, height=360)
        curves = CurveData(1000)
        for event in events:
            curves.observe(event)
        shoot(summary_html(run.state, curves), out / "llm_summary.png", width=1100, height=900)
    print(f"screenshots/llm: {out / 'llm_live.png'}, {out / 'llm_summary.png'}")


if __name__ == "__main__":
    main()
