"""LLM fine-tuning on a GPU: tokens/s of a ~200M-parameter model in bf16 and in 4-bit, and the
peak GPU memory against the pre-flight estimate (``ludwig_nb.estimate``).

    python -m benchmarks.llm_gpu            # skips (exit 0) without CUDA
    python -m benchmarks.llm_gpu --layers 4 # a smaller model

The model is a randomly initialised Llama (no download): 12 layers, 1024 wide, a 32,000-token
vocabulary (about 220M parameters), trained with LoRA r=16 on 1,200 rows at batch 16 through
the built-in engine; bf16 is ``use_mixed_precision`` over float32 weights (Ludwig's loading),
4-bit is bitsandbytes nf4 with bf16 compute. Tokens/s counts non-padding tokens (Ludwig's
count) and padded ones, over the steps after the first five.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.llm.tiny import build_tokenizer, sentiment_frame  # noqa: E402

CASES = {
    "bf16": {"trainer": {"use_mixed_precision": True}},
    "4-bit": {"quantization": {"bits": 4, "bnb_4bit_compute_dtype": "bfloat16"}},
}


def build_model(path: Path, layers: int, width: int) -> int:
    from transformers import AutoModelForCausalLM, LlamaConfig

    tok = build_tokenizer(path)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=32_000,
        hidden_size=width,
        intermediate_size=int(width * 2.75),
        num_hidden_layers=layers,
        num_attention_heads=width // 64,
        num_key_value_heads=max(1, width // 256),
        max_position_embeddings=2048,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(str(path))
    return sum(p.numel() for p in model.parameters())


def config_for(base: Path, case: dict[str, Any]) -> dict[str, Any]:
    from ludwig_nb.config import load_config

    trainer = {
        "type": "finetune",
        "epochs": 1,
        "batch_size": 16,
        "learning_rate": 0.0002,
        "optimizer": {"type": "adamw"},
        "skip_all_evaluation": True,
        **case.get("trainer", {}),
    }
    return load_config(
        {
            "model_type": "llm",
            "base_model": str(base),
            "input_features": [{"name": "review", "type": "text"}],
            "output_features": [{"name": "label", "type": "text"}],
            "prompt": {"template": "Review: {review}\nSentiment:"},
            "adapter": {"type": "lora", "r": 16},
            "trainer": trainer,
            "preprocessing": {"split": {"type": "random", "probabilities": [1.0, 0.0, 0.0]}},
            **{k: v for k, v in case.items() if k != "trainer"},
        }
    ).to_dict()


def estimated_bytes(config: dict[str, Any], data: Any) -> int | None:
    """The pre-flight's memory figure for ``config`` (None when this checkout has none)."""
    try:
        import ludwig_nb

        found = ludwig_nb.estimate(config, data)
    except Exception as err:  # the pre-flight is optional here: say why it is missing
        print(f"  (no pre-flight estimate: {type(err).__name__}: {err})")
        return None
    memory = getattr(found, "memory", None)  # Prediction.memory: a MemoryEstimate
    value = getattr(memory, "total_bytes", None)
    if isinstance(value, int):
        return value
    print("  (the pre-flight gave no memory figure for this config)")
    return None


def run_case(name: str, config: dict[str, Any], data: Any, run_dir: Path) -> None:
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    estimate = estimated_bytes(config, data)
    torch.cuda.reset_peak_memory_stats()
    events: list[Any] = []
    BuiltinEngine().fit(
        TrainJob(config, data, run_dir, name, name, device="cuda"), events.append, RunControl()
    )
    steps = [e for e in events if e.type == "step_finished"][5:]
    busy = sum(e.time - e.start_time for e in steps)
    real = sum(e.tokens for e in steps) / busy
    padded = sum(e.padded_tokens for e in steps) / busy
    median_ms = statistics.median(e.time - e.start_time for e in steps) * 1e3
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    line = (
        f"{name:6} {real:10,.0f} tok/s ({padded:,.0f} padded), step {median_ms:.1f} ms, "
        f"peak {peak / 2**30:.2f} GiB allocated / {reserved / 2**30:.2f} GiB reserved"
    )
    if estimate:
        line += f", pre-flight {estimate / 2**30:.2f} GiB ({peak / estimate:.2f}x of it)"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--rows", type=int, default=1200)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("llm_gpu: no CUDA device; skipped")
        return
    data = sentiment_frame(args.rows)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        count = build_model(base, args.layers, args.width)
        print(f"{torch.cuda.get_device_name()}: a random Llama of {count / 1e6:.0f}M parameters")
        for name, case in CASES.items():
            run_case(name, config_for(base, case), data, Path(scratch) / name)


if __name__ == "__main__":
    main()
