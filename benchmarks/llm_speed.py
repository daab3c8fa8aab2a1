"""LLM fine-tuning speed: the built-in engine's step against a hand-written transformers + PEFT
loop on the same model, batches and prompt (goal: the engine's step at most 1.1x the hand
loop's), for full fine-tuning, LoRA and 4-bit LoRA.

    python -m benchmarks.llm_speed            # a 4-layer, 256-wide Llama, 600 rows
    python -m benchmarks.llm_speed --quick    # a 2-layer, 64-wide one, to prove it runs
    python -m benchmarks.llm_speed --model /path/to/a/local/model

Both sides train the same rows in the same order (the engine's epoch order), batch by batch,
padded to each batch's longest row, loss on the answer's tokens only, AdamW; the figure is
the median step time of the steps after the first few (warm-up), and tokens/s over them
(non-padding tokens, as Ludwig counts). The engine's step time is read from its
StepFinished events (the step's own wall time: batch, forward, backward, optimizer, event).
Prints the load average beside the figures: compare only on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.llm.tiny import build_tokenizer, sentiment_frame  # noqa: E402

GOAL = 1.1
WARMUP_STEPS = 3
CASES = {
    "full": {},
    "lora": {"adapter": {"type": "lora", "r": 8}},
    "4-bit": {
        "adapter": {"type": "lora", "r": 8},
        "quantization": {"bits": 4, "bnb_4bit_compute_dtype": "float32"},
    },
}


def build_model(path: Path, layers: int, width: int) -> Path:
    """A random Llama of ``layers`` x ``width`` with the fixture's tokenizer in ``path``."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    tok = build_tokenizer(path)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=width,
        intermediate_size=width * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    AutoModelForCausalLM.from_config(config).save_pretrained(str(path))
    return path


def config_for(base: Path, case: dict[str, Any], epochs: int, batch: int) -> dict[str, Any]:
    from ludwig_nb.config import load_config

    return load_config(
        {
            "model_type": "llm",
            "base_model": str(base),
            "input_features": [{"name": "review", "type": "text"}],
            "output_features": [{"name": "label", "type": "text"}],
            "prompt": {"template": "Review: {review}\nSentiment:"},
            "generation": {"max_new_tokens": 2, "do_sample": False},
            "trainer": {
                "type": "finetune",
                "epochs": epochs,
                "batch_size": batch,
                "learning_rate": 0.001,
                "optimizer": {"type": "adamw"},
                "skip_all_evaluation": True,
                "gradient_clipping": {"clipglobalnorm": None},
            },
            "preprocessing": {"split": {"type": "random", "probabilities": [1.0, 0.0, 0.0]}},
            **case,
        }
    ).to_dict()


def engine_steps(config: dict[str, Any], data: Any, run_dir: Path) -> tuple[list[float], list[int]]:
    from ludwig_nb.core.control import RunControl
    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.engines.builtin import BuiltinEngine

    events: list[Any] = []
    BuiltinEngine().fit(
        TrainJob(config, data, run_dir, "bench", "bench", threads=torch.get_num_threads()),
        events.append,
        RunControl(),
    )
    steps = [e for e in events if e.type == "step_finished"]
    return [e.time - e.start_time for e in steps], [e.tokens for e in steps]


def hand_steps(config: dict[str, Any], data: Any) -> tuple[list[float], list[int]]:
    """A plain transformers + PEFT loop, written as a user would, on the engine's batches."""
    import peft
    from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

    from ludwig_nb.engines.builtin.device import batch_order
    from ludwig_nb.engines.builtin.llm.data import texts

    path = config["base_model"]
    tokenizer = AutoTokenizer.from_pretrained(path)
    kwargs: dict[str, Any] = {"dtype": torch.float32}
    if config.get("quantization"):
        kwargs = {
            "dtype": torch.float32,
            "device_map": {"": "cpu"},
            "quantization_config": BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_compute_dtype=torch.float32,
                bnb_4bit_use_double_quant=True,
                bnb_4bit_quant_type="nf4",
            ),
        }
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if config.get("quantization"):
        model = peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    adapter = config.get("adapter")
    if adapter:
        model = peft.get_peft_model(
            model,
            peft.LoraConfig(
                r=adapter["r"],
                lora_alpha=2 * adapter["r"],
                lora_dropout=0.05,
                task_type="CAUSAL_LM",
            ),
        )
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.001)
    encoded = texts(config, data, tokenizer).encoded
    batch_size = config["trainer"]["batch_size"]
    times, tokens = [], []
    for epoch in range(config["trainer"]["epochs"]):
        order = batch_order(len(encoded), 42, epoch, True).tolist()
        for start in range(0, len(order), batch_size):
            began = time.perf_counter()
            rows = [encoded.ids[r] for r in order[start : start + batch_size]]
            firsts = [encoded.prompt_lengths[r] for r in order[start : start + batch_size]]
            longest = max(len(r) for r in rows)
            ids = torch.full((len(rows), longest), tokenizer.pad_token_id)
            mask = torch.zeros_like(ids)
            labels = torch.full_like(ids, -100)
            for i, (row, first) in enumerate(zip(rows, firsts, strict=True)):
                ids[i, : len(row)] = torch.tensor(row)
                mask[i, : len(row)] = 1
                labels[i, first : len(row)] = ids[i, first : len(row)]
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss.item()
            times.append(time.perf_counter() - began)
            tokens.append(int(mask.sum()))
    return times, tokens


def summary(times: list[float], tokens: list[int]) -> tuple[float, float]:
    kept_t, kept_n = times[WARMUP_STEPS:], tokens[WARMUP_STEPS:]
    return statistics.median(kept_t), sum(kept_n) / sum(kept_t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model, few rows")
    parser.add_argument("--model", help="a local model folder instead of a random Llama")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rows = args.rows or (96 if args.quick else 600)
    data = sentiment_frame(rows)
    with tempfile.TemporaryDirectory() as scratch:
        base = (
            Path(args.model)
            if args.model
            else build_model(Path(scratch) / "base", *((2, 64) if args.quick else (4, 256)))
        )
        print(f"model {base.name}, {rows} rows, batch {args.batch}, {args.threads} thread(s)")
        print(
            f"{'case':8} {'hand ms':>9} {'engine ms':>10} {'hand tok/s':>11} "
            f"{'engine tok/s':>13} {'ratio':>6}  goal <= {GOAL}"
        )
        for name in args.cases.split(","):
            config = config_for(base, CASES[name], 1, args.batch)
            hand = summary(*hand_steps(config, data))
            engine = summary(*engine_steps(config, data, Path(scratch) / f"run-{name}"))
            ratio = engine[0] / hand[0]
            verdict = "met" if ratio <= GOAL else "NOT met"
            print(
                f"{name:8} {hand[0] * 1e3:9.2f} {engine[0] * 1e3:10.2f} {hand[1]:11,.0f} "
                f"{engine[1]:13,.0f} {ratio:6.2f}  {verdict}"
            )
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
