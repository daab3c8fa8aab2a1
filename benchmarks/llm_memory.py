"""The LLM memory pre-flight against measurement: ``python -m benchmarks.llm_memory [--quick]``.

For two architectures (Llama: separate q/k/v, rotary positions, grouped-query attention, a
6,000-token vocabulary so the probes' vocabulary is scaled too; GPT-2: fused attention,
learned positions, tied embeddings) built here with 6 layers and random weights (and with
``--realistic`` SmolLM2-135M's own shape: 30 layers, 576 wide, 49,152 tokens), and for
eight configurations varying rows, tokens, LoRA rank, gradient checkpointing, 4-bit
quantization and the adapter, it prints:

* activations: the pre-flight's estimate (probes on 1- and 2-layer copies, scaled) against
  the peak bytes held for backward measured on the 6-layer model itself (the same
  saved-tensor meter, CPU) for a padded batch of that shape; goal within 5 %;
* weights, gradients and optimizer states: the estimate against the 6-layer model's
  storage after one optimizer step;

and PASS / FAIL per configuration against the goal. ``--quick``: one architecture, three
configurations. The GPU side (the total against ``torch.cuda.max_memory_allocated``) is
``benchmarks/llm_memory_gpu.py``, run by ``scripts/checks/gpu_check.sh`` where a GPU is lent.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL = 0.05

#: name -> (Ludwig config sections, rows, tokens)
CASES: dict[str, tuple[dict[str, Any], int, int]] = {
    "full fine-tune": ({}, 4, 128),
    "lora r=8": ({"adapter": {"type": "lora", "r": 8, "dropout": 0.05}}, 8, 64),
    "lora r=64, long": ({"adapter": {"type": "lora", "r": 64}}, 4, 200),
    "lora r=16 + checkpointing": (
        {
            "adapter": {"type": "lora", "r": 16},
            "trainer": {"enable_gradient_checkpointing": True},
        },
        8,
        128,
    ),
    "4-bit + lora r=16": (
        {"adapter": {"type": "lora", "r": 16}, "quantization": {"bits": 4}},
        4,
        160,
    ),
    "4-bit + lora + checkpointing": (
        {
            "adapter": {"type": "lora", "r": 8},
            "quantization": {"bits": 4},
            "trainer": {"enable_gradient_checkpointing": True},
        },
        2,
        256,
    ),
    "one row, lora r=8": ({"adapter": {"type": "lora", "r": 8}}, 1, 300),
    "ia3": ({"adapter": {"type": "ia3"}}, 6, 96),
}
QUICK = ("lora r=8", "lora r=16 + checkpointing", "4-bit + lora r=16")
REALISTIC = ("lora r=8", "lora r=16 + checkpointing", "4-bit + lora r=16")


@dataclasses.dataclass
class Row:
    arch: str
    case: str
    rows: int
    tokens: int
    measured: int
    estimated: int
    states: tuple[int, int]  # (measured, estimated) weights + gradients + optimizer
    probe_s: float

    @property
    def error(self) -> float:
        return self.estimated / self.measured - 1.0


def _smollm2_shape(vocab: int, ids: dict[str, int]) -> Any:
    """SmolLM2-135M's published shape (config.json of HuggingFaceTB/SmolLM2-135M)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=49152,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        tie_word_embeddings=True,
        rope_theta=100000.0,
        **ids,
    )


def build_model(folder: Path, arch: str, layers: int) -> Path:
    """A random ``arch`` model with ``layers`` layers (the fixture's shapes) in ``folder``.

    ``smollm2``: SmolLM2-135M's shape at its own 30 layers and 49,152 tokens.
    """
    import torch
    from transformers import AutoModelForCausalLM

    from tests.fixtures.llm.tiny import ARCHITECTURES

    vocab = 6000 if arch == "llama" else 384
    ids = {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
    if arch == "smollm2":
        config = _smollm2_shape(vocab, ids)
    else:
        config = ARCHITECTURES[arch](vocab, ids)
        config.num_hidden_layers = layers
    if hasattr(config, "max_position_embeddings"):
        config.max_position_embeddings = 512
    else:
        config.n_positions = 512
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(str(folder))
    return folder


def measure(folder: Path, sections: dict[str, Any], rows: int, tokens: int) -> tuple[int, int]:
    """(peak bytes held for backward, weights + gradients + optimizer bytes) on the model."""
    import torch

    from ludwig_nb.engines.builtin.llm import loading
    from ludwig_nb.engines.builtin.llm.probe import reentrant_checkpointing
    from ludwig_nb.engines.builtin.llm.saved_tensors import SavedTensorMeter, storage_bytes
    from ludwig_nb.engines.builtin.optim import build_optimizer

    config = {"trainer": {}, **sections}
    checkpointing = bool(config["trainer"].get("enable_gradient_checkpointing"))
    model = loading.load_base(
        folder, config, torch.device("cpu"), gradient_checkpointing=checkpointing
    )
    model = loading.wrap_adapter(model, config.get("adapter"), 100)
    if checkpointing:
        reentrant_checkpointing(model)
    model.train()
    weights = storage_bytes(model)  # as loaded (bitsandbytes repacks on a CPU's first pass)
    with torch.no_grad():
        model(input_ids=torch.tensor([[3, 4, 5]]))
    vocab = model.get_input_embeddings().weight.shape[0]
    generator = torch.Generator().manual_seed(7)
    ids = torch.randint(3, vocab, (rows, tokens), generator=generator)
    mask = torch.zeros_like(ids)
    for r in range(rows):  # the longest row first, the others shorter (right padding)
        mask[r, : tokens if r == 0 else max(1, tokens * (rows - r) // (rows + 1))] = 1
    labels = torch.where(mask.bool(), ids, torch.full_like(ids, -100))
    meter = SavedTensorMeter(model)
    with meter:
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = build_optimizer(trainable, {}, 1e-4)
    optimizer.step()
    states = {
        v.untyped_storage().data_ptr(): v.untyped_storage().nbytes()
        for s in optimizer.state.values()
        for v in s.values()
        if isinstance(v, torch.Tensor) and v.numel() > 1
    }
    grads = sum(p.numel() * p.element_size() for p in trainable)
    return meter.peak, weights + grads + sum(states.values())


def estimate(folder: Path, sections: dict[str, Any], rows: int, tokens: int) -> tuple[int, int]:
    """The pre-flight's (activations, weights + gradients + optimizer) for the same shape."""
    from ludwig_nb.engines.builtin.llm.probe import ProbeSpec, probe_footprint

    found = probe_footprint(ProbeSpec(folder, {"trainer": {}, **sections}, rows, total_steps=100))
    return found.activations(rows, tokens), found.weights + found.gradients + found.optimizer


def run_case(folder: Path, arch: str, case: str) -> Row:
    sections, rows, tokens = CASES[case]
    began = time.perf_counter()
    estimated, est_states = estimate(folder, sections, rows, tokens)
    probe_s = time.perf_counter() - began
    measured, states = measure(folder, sections, rows, tokens)
    return Row(arch, case, rows, tokens, measured, estimated, (states, est_states), probe_s)


def _mib(n: int) -> str:
    return f"{n / 2**20:8.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one architecture, three cases")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument(
        "--realistic",
        action="store_true",
        help="also SmolLM2-135M's shape (30 layers, 576 wide, 49,152 tokens): ~5 min more",
    )
    args = parser.parse_args(argv)
    import torch
    from transformers.utils import logging as hf_logging

    torch.set_num_threads(1)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    arches = ("llama",) if args.quick else ("llama", "gpt2")
    if args.realistic:
        arches += ("smollm2",)
    cases = QUICK if args.quick else tuple(CASES)
    print(f"activations held for backward, MiB: estimate (probes scaled to {args.layers} layers)")
    print(f"vs measured on the {args.layers}-layer model; goal: within {GOAL:.0%}")
    print(
        f"{'arch':6s} {'case':30s} {'rows':>4s} {'tokens':>6s} {'measured':>8s} "
        f"{'estimate':>8s} {'error':>7s}  {'states err':>10s} {'probe s':>7s}"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="ludwig_nb-llm-memory-") as tmp:
        for arch in arches:
            folder = build_model(Path(tmp) / arch, arch, args.layers)
            for case in REALISTIC if arch == "smollm2" else cases:
                row = run_case(folder, arch, case)
                results.append(row)
                states_err = row.states[1] / row.states[0] - 1.0
                verdict = "PASS" if abs(row.error) <= GOAL else "FAIL"
                print(
                    f"{arch:6s} {case:30s} {row.rows:4d} {row.tokens:6d} {_mib(row.measured)} "
                    f"{_mib(row.estimated)} {row.error:+7.2%}  {states_err:+10.2%} "
                    f"{row.probe_s:7.1f}  {verdict}",
                    flush=True,
                )
    worst = max(abs(r.error) for r in results)
    passed = sum(abs(r.error) <= GOAL for r in results)
    ok = passed == len(results) and not math.isnan(worst)
    print(
        f"\n{'PASS' if ok else 'FAIL'}  activations within {GOAL:.0%} on {passed} of "
        f"{len(results)} configurations ({len(arches)} architectures); worst {worst:.2%}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
