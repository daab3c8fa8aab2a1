"""An LLM fine-tune, whole process, on the built-in engine against real Ludwig 0.11: the same
config, the same local model and rows (goal: the built-in engine at least 3x faster).

Each run is a fresh Python process that imports ludwig_nb, trains through ``ludwig_nb.train``
with ``engine=builtin`` or ``engine=ludwig`` and exits: the wall time from the process's
start to its end (imports, preprocessing, model load, training, evaluation, saving). Both run
with the Ludwig venv's python (its torch), which has both engines; runs alternate and the best
of each counts.

    $(bash scripts/setup/ludwig_env.sh | tail -1)/bin/python -m benchmarks.llm_vs_ludwig \\
        [--rows 400] [--epochs 2] [--repeats 2] [--adapter lora]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 3.0

_CHILD = """
import sys, json
sys.path.insert(0, {root!r})
import ludwig_nb
run = ludwig_nb.train({config!r}, {data!r}, engine={engine!r}, results_dir={results!r},
                      threads=1, wait=True)
print(json.dumps({{"status": run.status, "error": str(run.error or "")}}))
"""


def _config(base: Path, epochs: int, adapter: str) -> str:
    lines = [
        "model_type: llm",
        f"base_model: {base}",
        'input_features: [{name: review, type: text, preprocessing: {fill_value: ""}}]',
        "output_features: [{name: label, type: text}]",
        'prompt: {template: "Review: {review}\\nSentiment:"}',
        "generation: {max_new_tokens: 4, do_sample: false}",
        f"trainer: {{type: finetune, epochs: {epochs}, batch_size: 16, eval_batch_size: 32, "
        "learning_rate: 0.003, optimizer: {type: adamw}}",
    ]
    if adapter != "none":
        lines.append(f"adapter: {{type: {adapter}}}")
    return "\n".join(lines) + "\n"


def _one(engine: str, config: str, data: Path, scratch: Path) -> float:
    code = _CHILD.format(
        root=str(ROOT), config=config, data=str(data), engine=engine, results=str(scratch)
    )
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    last = (done.stdout.strip().splitlines() or ["{}"])[-1]
    result = json.loads(last) if last.startswith("{") else {}
    if done.returncode or result.get("status") != "completed":
        raise SystemExit(f"{engine} run failed: {result or done.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--adapter", default="none", choices=["none", "lora"])
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.llm.tiny import build_tiny_llm, sentiment_frame

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        base = build_tiny_llm(scratch / "base", "llama")
        data = scratch / "reviews.csv"
        sentiment_frame(args.rows).to_csv(data, index=False)
        config = _config(base, args.epochs, args.adapter)
        best: dict[str, float] = {}
        for i in range(args.repeats):
            for engine in ("builtin", "ludwig"):
                took = _one(engine, config, data, scratch / f"{engine}-{i}")
                best[engine] = min(best.get(engine, took), took)
                print(f"  {engine:8} run {i + 1}: {took:6.1f} s")
    ratio = best["ludwig"] / best["builtin"]
    verdict = "met" if ratio >= GOAL else "NOT met"
    print(
        f"whole process, {args.rows} rows x {args.epochs} epochs, adapter {args.adapter}: "
        f"builtin {best['builtin']:.1f} s, Ludwig 0.11 {best['ludwig']:.1f} s, "
        f"{ratio:.2f}x faster (goal >= {GOAL}: {verdict})"
    )
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
