"""Token ids for fine-tuning: prompt + target + end of sequence, truncated, padded, counted.

As Ludwig 0.11 merges them (``ludwig/utils/llm_utils.py::generate_merged_ids``): the prompt's
ids, then the target's, then the tokenizer's end-of-sequence id; the loss reads only the
target's tokens and the end of sequence (every other label is -100). The prompt is cut to the
input feature's ``preprocessing.max_sequence_length``, the target to the output feature's, the
whole to ``preprocessing.global_max_sequence_length``; every cut row is counted (a truncation
is reported, never silent).

Batches are padded on the right to their longest row (a causal model's positions then match
an unpadded row's), so a batch costs ``rows x longest`` padded tokens: :func:`padded_tokens`
gives that cost for every batch of an ordered epoch, which the token-aware ETA sums.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = [
    "IGNORE_INDEX",
    "Encoded",
    "collate",
    "encode_rows",
    "length_limits",
    "padded_tokens",
]

#: the label of a token the loss ignores (torch's and transformers' convention, Ludwig's too)
IGNORE_INDEX = -100


@dataclasses.dataclass(frozen=True)
class Encoded:
    """One split's token ids.

    ``ids[i]``: row i's prompt + target (+ eos) ids, truncated. ``prompt_lengths[i]``: how many
    of them are the prompt's. ``full_lengths[i]``: the row's length before truncation.
    ``truncated``: rows that lost tokens to a limit.
    """

    ids: list[list[int]]
    prompt_lengths: list[int]
    full_lengths: list[int]
    truncated: int

    @property
    def lengths(self) -> list[int]:
        """Each row's length in tokens, as trained (after truncation)."""
        return [len(row) for row in self.ids]

    def __len__(self) -> int:
        return len(self.ids)


def length_limits(config: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(prompt, target, whole) token limits from the config; None: no limit."""
    inputs = config.get("input_features") or [{}]
    outputs = config.get("output_features") or [{}]

    def limit(section: Mapping[str, Any] | None, key: str) -> int | None:
        value = (section or {}).get(key)
        return int(value) if value else None

    return (
        limit(inputs[0].get("preprocessing"), "max_sequence_length"),
        limit(outputs[0].get("preprocessing"), "max_sequence_length"),
        limit(config.get("preprocessing"), "global_max_sequence_length"),
    )


def encode_rows(
    tokenizer: Any,
    prompts: Sequence[str],
    targets: Sequence[str] | None,
    limits: tuple[int | None, int | None, int | None] = (None, None, None),
) -> Encoded:
    """Tokenize ``prompts`` (+ ``targets`` and the end of sequence when given).

    The prompt takes the tokenizer's special tokens (a begin-of-sequence where it adds one),
    the target none. Without targets (prediction) the rows are the prompts alone.
    """
    prompt_limit, target_limit, whole_limit = limits
    prompt_ids = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
    target_ids = (
        tokenizer(list(targets), add_special_tokens=False)["input_ids"]
        if targets is not None
        else [[] for _ in prompt_ids]
    )
    eos = [tokenizer.eos_token_id] if targets is not None else []
    rows, prompt_lengths, full, cut = [], [], [], 0
    for prompt, target in zip(prompt_ids, target_ids, strict=True):
        whole = len(prompt) + len(target) + len(eos)
        p = prompt[:prompt_limit] if prompt_limit else prompt
        t = target[:target_limit] if target_limit else target
        row = p + t + eos
        if whole_limit and len(row) > whole_limit:
            row = row[:whole_limit]
        cut += len(row) < whole
        rows.append(row)
        prompt_lengths.append(min(len(p), len(row)))
        full.append(whole)
    return Encoded(rows, prompt_lengths, full, cut)


def collate(
    encoded: Encoded, rows: Sequence[int], pad_id: int, *, left: bool = False
) -> dict[str, torch.Tensor]:
    """The batch of ``rows``: ``input_ids``, ``attention_mask``, ``labels`` (int64 tensors).

    Padded to the batch's longest row with ``pad_id`` (on the right; ``left`` for generation);
    labels are the ids of target tokens and -100 elsewhere (prompt and padding).
    """
    longest = max(len(encoded.ids[r]) for r in rows)
    ids = torch.full((len(rows), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    labels = torch.full((len(rows), longest), IGNORE_INDEX, dtype=torch.long)
    for i, r in enumerate(rows):
        row = encoded.ids[r]
        start = longest - len(row) if left else 0
        span = slice(start, start + len(row))
        ids[i, span] = torch.tensor(row, dtype=torch.long)
        mask[i, span] = 1
        first_target = start + encoded.prompt_lengths[r]
        labels[i, first_target : start + len(row)] = ids[i, first_target : start + len(row)]
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def padded_tokens(lengths: Sequence[int], order: Sequence[int], batch_size: int) -> list[int]:
    """Padded tokens (rows x longest row) of each batch of ``order`` (row indices)."""
    out = []
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        out.append(len(batch) * max(lengths[r] for r in batch))
    return out
