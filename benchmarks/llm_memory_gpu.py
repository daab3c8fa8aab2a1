"""The LLM memory pre-flight against a GPU's measured peak: ``python -m benchmarks.llm_memory_gpu``.

Skips (exit 0) without CUDA. On a GPU: a randomly initialised model of SmolLM2-135M's shape
(30 layers, 576 wide, 49,152 tokens; no download) trains one epoch of the bundled reviews
(long rows: up to 512 tokens) through the built-in engine on the GPU, for five configs (LoRA
in float32 as Ludwig loads it, LoRA under mixed precision, 4-bit QLoRA, a full fine-tune,
LoRA with gradient checkpointing). For each it prints the pre-flight's total
(``footprint.estimate_memory``: the same figure ``ludwig_nb.estimate`` and the dashboard
show) and its parts, against

* ``torch.cuda.max_memory_allocated`` from the run's start (after loading) to its end, plus
  the CUDA context the pre-flight measured here: the goal is within 10 %;
* ``torch.cuda.max_memory_reserved`` plus the context (what ``nvidia-smi`` would show;
  allocator caching and fragmentation on top), for information.

``--layers N`` shrinks the model for a quicker check.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

GOAL = 0.10

CASES: dict[str, dict[str, Any]] = {
    "lora fp32": {"adapter": {"type": "lora", "r": 16}},
    "lora mixed precision": {
        "adapter": {"type": "lora", "r": 16},
        "trainer": {"use_mixed_precision": True},
    },
    "4-bit qlora": {
        "adapter": {"type": "lora", "r": 16},
        "quantization": {"bits": 4, "bnb_4bit_compute_dtype": "bfloat16"},
    },
    "full fine-tune": {"trainer": {"batch_size": 4}},
    "lora + checkpointing": {
        "adapter": {"type": "lora", "r": 16},
        "trainer": {"enable_gradient_checkpointing": True, "batch_size": 16},
    },
}


def build_model(path: Path, layers: int) -> int:
    """A random SmolLM2-135M-shaped Llama with the test tokenizer in ``path``; its size."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    from tests.fixtures.llm.tiny import build_tokenizer

    tok = build_tokenizer(path)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=layers,
        num_attention_heads=9,
        num_key_value_heads=3,
        tie_word_embeddings=True,
        max_position_embeddings=2048,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(str(path))
    return sum(p.numel() for p in model.parameters())


def config_for(base: Path, case: dict[str, Any]) -> dict[str, Any]:
    from ludwig_nb.config import load_config

    trainer = {
        "type": "finetune",
        "epochs": 1,
        "batch_size": 8,
        "learning_rate": 0.0002,
        "skip_all_evaluation": True,
        **case.get("trainer", {}),
    }
    return load_config(
        {
            "model_type": "llm",
            "base_model": str(base),
            "input_features": [{"name": "review", "type": "text"}],
            "output_features": [{"name": "score", "type": "text"}],
            "prompt": {"template": "Review: {review}\nScore:"},
            "trainer": trainer,
            "preprocessing": {
                "split": {"type": "random", "probabilities": [1.0, 0.0, 0.0]},
                "global_max_sequence_length": 512,
            },
            **{k: v for k, v in case.items() if k != "trainer"},
        }
    ).to_dict()


def run_case(name: str, config: dict[str, Any], data: Any, run_dir: Path) -> bool:
    """Estimate, train on the GPU, print the comparison; True when within the goal."""
    import torch

    from ludwig_nb.core.control import RunControl
    from ludwig_nb.core.formatting import format_bytes
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine
    from ludwig_nb.engines.builtin.llm.footprint import estimate_memory

    estimate = estimate_memory(config, data)
    context = estimate.parts["cuda_context"]

    def emit(event: Any) -> None:
        if event.type == "run_started":  # loading is over: the steps' peak from here
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()

    job = TrainJob(config, data, run_dir, name, name, device="cuda")
    BuiltinEngine().fit(job, emit, RunControl())
    allocated = torch.cuda.max_memory_allocated() + context
    reserved = torch.cuda.max_memory_reserved() + context
    error = estimate.total_bytes / allocated - 1.0
    parts = ", ".join(f"{k} {format_bytes(v)}" for k, v in estimate.parts.items())
    ok = abs(error) <= GOAL
    print(
        f"{name:22s} estimate {format_bytes(estimate.total_bytes):>10s}  measured "
        f"{format_bytes(allocated):>10s} ({error:+.1%})  reserved {format_bytes(reserved):>10s}  "
        f"{'PASS' if ok else 'FAIL'}\n{'':22s} {parts}; longest row {estimate.sequence_length}",
        flush=True,
    )
    del job
    torch.cuda.empty_cache()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=30)
    parser.add_argument("--rows", type=int, default=240)
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("llm_memory_gpu: no CUDA device; skipped")
        return 0
    from ludwig_nb.data import demo_dataset
    from ludwig_nb.data.loading import load_dataset

    data = load_dataset(demo_dataset("reviews")).head(args.rows)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        count = build_model(base, args.layers)
        print(f"{torch.cuda.get_device_name()}: a random Llama of {count / 1e6:.0f}M parameters")
        print(f"pre-flight total against the measured peak (+ context); goal within {GOAL:.0%}")
        for name, case in CASES.items():
            results.append(run_case(name, config_for(base, case), data, Path(scratch) / name))
    passed = sum(results)
    print(f"\n{'PASS' if all(results) else 'FAIL'}  {passed} of {len(results)} within {GOAL:.0%}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
