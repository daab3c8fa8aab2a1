"""Generate answers with the config's ``generation`` settings, in Ludwig's prediction columns.

``generation`` becomes a transformers ``GenerationConfig`` (every key Ludwig 0.11 has is one of
its fields); the pad and end-of-sequence ids are the tokenizer's when the config leaves them
null. Prompts are padded on the left in a batch, so every row's answer starts at the same
column. A sampled generation (``do_sample: true``, Ludwig's default) draws from torch's
generator seeded by the caller.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ludwig_nb.engines.builtin.llm.tokens import Encoded, collate

__all__ = ["Answers", "generate", "generation_config"]


@dataclasses.dataclass(frozen=True)
class Answers:
    """Generated answers, one per prompt.

    ``texts``: decoded, special tokens skipped (Ludwig's ``_response``); ``tokens``: each
    answer's tokens decoded one by one (``_predictions``); ``probabilities``: each token's
    probability (``_probabilities``); ``log_probability``: their log product (``_probability``).
    """

    texts: list[str]
    tokens: list[list[str]]
    probabilities: list[list[float]]
    log_probability: list[float]


def generation_config(section: Mapping[str, Any] | None, tokenizer: Any) -> Any:
    """Transformers' ``GenerationConfig`` for Ludwig's ``generation`` section."""
    from transformers import GenerationConfig

    known = set(GenerationConfig().to_dict())  # type: ignore[no-untyped-call]
    kwargs = {k: v for k, v in dict(section or {}).items() if k in known and v is not None}
    if kwargs.get("max_new_tokens"):
        kwargs.pop("max_length", None)  # max_new_tokens wins, as in transformers
    kwargs.update(return_dict_in_generate=True, output_scores=True)
    kwargs.setdefault("pad_token_id", tokenizer.pad_token_id)
    kwargs.setdefault("eos_token_id", tokenizer.eos_token_id)
    if not kwargs.get("do_sample"):  # greedy or beams: sampling knobs would only warn
        for key in ("temperature", "top_k", "top_p", "typical_p"):
            kwargs.pop(key, None)
    return GenerationConfig(**kwargs)  # type: ignore[no-untyped-call]


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Encoded,
    config: Any,
    batch_size: int,
    device: torch.device,
) -> Answers:
    """Answer every row of ``prompts`` (prompt-only rows), ``batch_size`` rows at a time."""
    texts: list[str] = []
    tokens: list[list[str]] = []
    probs: list[list[float]] = []
    logs: list[float] = []
    order = sorted(range(len(prompts)), key=lambda r: len(prompts.ids[r]))  # less padding
    found: dict[int, tuple[str, list[str], list[float]]] = {}
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            answers = _batch(model, tokenizer, prompts, rows, config, device)
            for r, answer in zip(rows, answers, strict=True):
                found[r] = answer
    finally:
        model.train(was_training)
    for r in range(len(prompts)):
        text, pieces, chosen = found[r]
        texts.append(text)
        tokens.append(pieces)
        probs.append(chosen)
        logs.append(sum(math.log(max(p, 1e-45)) for p in chosen))
    return Answers(texts, tokens, probs, logs)


def _batch(
    model: Any,
    tokenizer: Any,
    prompts: Encoded,
    rows: Sequence[int],
    config: Any,
    device: torch.device,
) -> list[tuple[str, list[str], list[float]]]:
    batch = collate(prompts, rows, tokenizer.pad_token_id, left=True)
    ids = batch["input_ids"].to(device)
    with torch.no_grad():
        out = model.generate(
            input_ids=ids,
            attention_mask=batch["attention_mask"].to(device),
            generation_config=config,
        )
    new = out.sequences[:, ids.shape[1] :].cpu()
    chosen = _chosen_probabilities(out, new)
    stop = {tokenizer.eos_token_id, tokenizer.pad_token_id}
    answers = []
    for i in range(new.shape[0]):
        kept = [int(t) for t in new[i]]
        end = next((j for j, t in enumerate(kept) if t in stop), len(kept))
        kept = kept[:end]
        pieces = [tokenizer.decode([t], skip_special_tokens=True) for t in kept]
        text = tokenizer.decode(kept, skip_special_tokens=True).strip()
        answers.append((text, pieces, chosen[i][:end]))
    return answers


def _chosen_probabilities(out: Any, new: torch.Tensor) -> list[list[float]]:
    """Each generated token's probability under the (processed) scores it was drawn from."""
    if not getattr(out, "scores", None) or getattr(out, "beam_indices", None) is not None:
        return [[math.nan] * new.shape[1] for _ in range(new.shape[0])]
    steps = torch.stack([s.float().softmax(-1).cpu() for s in out.scores], dim=1)
    picked = steps.gather(-1, new[:, : steps.shape[1]].unsqueeze(-1)).squeeze(-1)
    return [row.tolist() for row in picked]
