"""Record real language-model step traces: ``python -m benchmarks.eta.record_llm [NAMES]``.

A plain transformers loop (no ludwig_nb engine) fine-tunes small randomly initialised
causal LMs on the bundled ``reviews`` text on this machine's CPU and writes what a run
writes: ``events.ndjson`` lines (``core/events.py``) with each step's tokens and padded
tokens, a ``EpochPlanned`` event when an epoch is ordered, and an evaluation (loss and
greedy generation) after every epoch. Each trace goes to ``traces/llm/NAME.ndjson`` with
``NAME.meta.json`` (load average before and after, threads, model size).

Rows are "Review: <text>\\nSentiment:" + " <score>" + end of sequence, tokenised by a
byte-level BPE trained here on the same text, truncated at ``max_len`` tokens. "varied"
traces pad each batch to its longest row (step times follow the tokens); "fixed" ones pad
every row to ``max_len`` (every step computes the same tokens); "grouped" ones order rows
by length within shuffled groups of 50 batches (as ``group_by_length`` does), so the
padded length drifts batch to batch. One torch thread: on a small shared machine the
default thread pool makes step times far burstier.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.eta.traces import TRACES_DIR
from ludwig_nb.core import events as ev

LLM_TRACES_DIR = TRACES_DIR / "llm"
_REVIEWS = Path(__file__).resolve().parents[2] / "ludwig_nb" / "data" / "datasets" / "reviews.csv"


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One trace: model shape, padding mode, batch and run length."""

    arch: str  # "llama" | "gpt2"
    width: int
    layers: int
    padding: str  # "varied" | "fixed" | "grouped"
    batch_size: int = 4
    accumulation: int = 1
    rows: int = 1000
    epochs: int = 3
    max_len: int = 512
    fixed_len: int = 128
    seed: int = 0


RECIPES: dict[str, Recipe] = {
    "tiny_llama_varied": Recipe("llama", 64, 2, "varied"),
    "tiny_llama_fixed": Recipe("llama", 64, 2, "fixed"),
    "small_gpt2_varied": Recipe("gpt2", 128, 4, "varied", rows=640),
    "small_gpt2_fixed": Recipe("gpt2", 128, 4, "fixed", rows=640),
    "small_llama_accum_varied": Recipe(
        "llama", 160, 4, "varied", batch_size=2, accumulation=2, rows=640
    ),
    "small_llama_grouped": Recipe("llama", 160, 4, "grouped", rows=640),
}


def _texts() -> list[tuple[str, str]]:
    with _REVIEWS.open(encoding="utf-8", newline="") as handle:
        return [(row["review"], row["score"]) for row in csv.DictReader(handle)]


def _tokenizer(texts: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2048,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def _model(recipe: Recipe, vocab: int) -> Any:
    from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig

    if recipe.arch == "gpt2":
        config: Any = GPT2Config(
            vocab_size=vocab,
            n_embd=recipe.width,
            n_layer=recipe.layers,
            n_head=4,
            n_positions=recipe.max_len + 32,
        )
    else:
        config = LlamaConfig(
            vocab_size=vocab,
            hidden_size=recipe.width,
            intermediate_size=2 * recipe.width,
            num_hidden_layers=recipe.layers,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=recipe.max_len + 32,
        )
    config.pad_token_id, config.bos_token_id, config.eos_token_id = 0, 1, 1
    return AutoModelForCausalLM.from_config(config)


def _encode(tok: Any, rows: list[tuple[str, str]], max_len: int) -> list[tuple[list[int], int]]:
    """(token ids, prompt length) per row, truncated at ``max_len`` tokens (target kept)."""
    out = []
    for text, score in rows:
        prompt = tok.encode(f"Review: {text}\nSentiment:").ids
        target = [*tok.encode(f" {score}").ids, 1]
        prompt = prompt[: max(1, max_len - len(target))]
        out.append((prompt + target, len(prompt)))
    return out


def _order(recipe: Recipe, lengths: list[int], rng: random.Random) -> list[int]:
    """One epoch's row order."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    if recipe.padding != "grouped":
        return order
    group = 50 * recipe.batch_size
    chunks = [order[i : i + group] for i in range(0, len(order), group)]
    out: list[int] = []
    for chunk in chunks:
        out.extend(sorted(chunk, key=lambda i: -lengths[i]))
    return out


def _micro_batches(recipe: Recipe, order: list[int], lengths: list[int]) -> list[list[list[int]]]:
    """Steps of micro-batches of row indices (a partial last step is dropped)."""
    b, g = recipe.batch_size, recipe.accumulation
    per_step = b * g
    steps = len(order) // per_step
    return [
        [order[s * per_step + m * b : s * per_step + (m + 1) * b] for m in range(g)]
        for s in range(steps)
    ]


def _padded_len(recipe: Recipe, rows: list[int], lengths: list[int]) -> int:
    return recipe.fixed_len if recipe.padding == "fixed" else max(lengths[i] for i in rows)


def _tensors(recipe: Recipe, rows: list[int], data: list[tuple[list[int], int]]) -> Any:
    """Input ids, attention mask and labels (the target tokens only) of ``rows``."""
    import torch

    width = _padded_len(recipe, rows, [len(d[0]) for d in data])
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for r, i in enumerate(rows):
        seq, prompt = data[i]
        ids[r, : len(seq)] = torch.tensor(seq)
        mask[r, : len(seq)] = 1
        labels[r, prompt : len(seq)] = torch.tensor(seq[prompt:])
    return ids, mask, labels


def _evaluate(model: Any, recipe: Recipe, data: list[tuple[list[int], int]]) -> float:
    """Validation loss over ``data`` and greedy generation of 8 tokens for 8 rows."""
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad():
        for start in range(0, len(data), 16):
            rows = list(range(start, min(len(data), start + 16)))
            ids, mask, labels = _tensors(dataclasses.replace(recipe, padding="varied"), rows, data)
            total += float(model(input_ids=ids, attention_mask=mask, labels=labels).loss)
        for seq, prompt in data[:8]:
            ids = torch.tensor([seq[:prompt]])
            model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)
    model.train()
    return total


def _run(recipe: Recipe, name: str, emit: Callable[[ev.Event], None]) -> dict[str, Any]:
    import torch

    torch.manual_seed(recipe.seed)
    rng = random.Random(recipe.seed)
    texts = _texts()
    rng.shuffle(texts)
    tok = _tokenizer([t for t, _ in texts])
    max_len = recipe.fixed_len if recipe.padding == "fixed" else recipe.max_len
    data = _encode(tok, texts[: recipe.rows], max_len)
    held_out = _encode(tok, texts[recipe.rows : recipe.rows + 64], max_len)
    lengths = [len(seq) for seq, _ in data]
    model = _model(recipe, tok.get_vocab_size())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    per_epoch = len(data) // (recipe.batch_size * recipe.accumulation)
    total = per_epoch * recipe.epochs
    schedule = ev.ScheduleInfo(
        total_steps=total,
        steps_per_epoch=per_epoch,
        epochs=recipe.epochs,
        epoch_starts=tuple(range(0, total, per_epoch)),
        evaluations_after=tuple(range(per_epoch - 1, total, per_epoch)),
        batch_size=recipe.batch_size * recipe.accumulation,
        evaluation_batches=(len(held_out) + 15) // 16,
    )
    emit(ev.PhaseChanged(time=time.time(), phase="training"))
    emit(ev.RunStarted(time.time(), name, name, "transformers-loop", "cpu", schedule))
    step = 0
    for epoch in range(recipe.epochs):
        plan = _micro_batches(recipe, _order(recipe, lengths, rng), lengths)
        padded = [sum(len(m) * _padded_len(recipe, m, lengths) for m in s) for s in plan]
        real = [sum(lengths[i] for m in s for i in m) for s in plan]
        emit(
            ev.EpochPlanned(
                time.time(),
                first_step=step,
                padded_tokens=tuple(padded),
                tokens=tuple(real),
                epoch=epoch,
            )
        )
        for micro in plan:
            began = time.time()
            loss_sum = 0.0
            for rows in micro:
                ids, mask, labels = _tensors(recipe, rows, data)
                loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
                (loss / recipe.accumulation).backward()
                loss_sum += float(loss.detach())
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            real = sum(lengths[i] for m in micro for i in m)
            emit(
                ev.StepFinished(
                    time=time.time(),
                    step=step,
                    epoch=epoch,
                    start_time=began,
                    batch_size=recipe.batch_size * recipe.accumulation,
                    loss=loss_sum / recipe.accumulation,
                    tokens=real,
                    padded_tokens=sum(len(m) * _padded_len(recipe, m, lengths) for m in micro),
                )
            )
            step += 1
        began = time.time()
        _evaluate(model, recipe, held_out)
        emit(ev.EvaluationFinished(time.time(), step - 1, epoch, began, metrics={}))
    emit(ev.RunFinished(time=time.time(), status="completed", step=step))
    return {"parameters": sum(p.numel() for p in model.parameters()), "steps": total}


def record(name: str, out_dir: Path) -> Path:
    """Record trace ``name`` of :data:`RECIPES` into ``out_dir``; returns the file."""
    import torch
    from transformers.utils import logging as hf_logging

    torch.set_num_threads(1)
    hf_logging.set_verbosity_error()
    recipe = RECIPES[name]
    load_before = os.getloadavg()
    lines: list[str] = []
    info = _run(recipe, name, lambda e: lines.append(e.to_json()))
    out = out_dir / f"{name}.ndjson"
    out.write_text("".join(line + "\n" for line in lines), "utf-8")
    meta = {
        "recipe": dataclasses.asdict(recipe),
        **info,
        "loadavg_before": [round(v, 2) for v in load_before],
        "loadavg_after": [round(v, 2) for v in os.getloadavg()],
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    (out_dir / f"{name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n", "utf-8")
    return out


def _names(argv: list[str]) -> Iterator[str]:
    for name in argv or list(RECIPES):
        if name not in RECIPES:
            raise SystemExit(f"unknown trace {name!r}; one of {sorted(RECIPES)}")
        yield name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"of {list(RECIPES)} (default: all)")
    parser.add_argument("--out", default=str(LLM_TRACES_DIR))
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in _names(args.names):
        began = time.perf_counter()
        path = record(name, out_dir)
        print(f"{name}: {path} ({time.perf_counter() - began:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
