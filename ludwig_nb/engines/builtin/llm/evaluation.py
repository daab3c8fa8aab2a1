"""Ludwig's LLM metrics over a split, teacher-forced, as Ludwig 0.11 computes them.

The loss is the mean cross-entropy of the target tokens (and end of sequence) given every
token before them (Ludwig's ``next_token_softmax_cross_entropy``); ``perplexity`` is its
exponential over the split, ``next_token_perplexity`` the mean of each batch's;
``token_accuracy`` the share of target tokens whose most likely prediction is right;
``sequence_accuracy`` the share of rows whose every target token is. (BLEU, ROUGE and the
error rates are not registered metrics in Ludwig 0.11, so they are not computed.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ludwig_nb.engines.builtin.llm.tokens import IGNORE_INDEX, Encoded, collate

__all__ = ["LLM_METRICS", "batch_sums", "evaluate_encoded"]

#: the metrics of an LLM's text output, as Ludwig names them
LLM_METRICS = (
    "loss",
    "perplexity",
    "next_token_perplexity",
    "token_accuracy",
    "sequence_accuracy",
)


def batch_sums(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, float]:
    """One batch's sums: summed loss, target tokens, right tokens, rows, right rows."""
    shifted = logits[:, :-1, :].float()
    targets = labels[:, 1:]
    mask = targets != IGNORE_INDEX
    loss = torch.nn.functional.cross_entropy(
        shifted.reshape(-1, shifted.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    )
    right = (shifted.argmax(-1) == targets) & mask
    rows_right = (right | ~mask).all(dim=1)
    return {
        "loss_sum": float(loss),
        "tokens": float(mask.sum()),
        "right": float(right.sum()),
        "rows": float(labels.shape[0]),
        "rows_right": float(rows_right.sum()),
    }


def evaluate_encoded(
    model: Any,
    encoded: Encoded,
    pad_id: int,
    batch_size: int,
    device: torch.device,
    autocast: Callable[[], Any],
) -> dict[str, float]:
    """Ludwig's LLM metrics of ``model`` over ``encoded`` (see the module docstring)."""
    totals = {"loss_sum": 0.0, "tokens": 0.0, "right": 0.0, "rows": 0.0, "rows_right": 0.0}
    batch_perplexities = []
    order = sorted(range(len(encoded)), key=lambda r: len(encoded.ids[r]))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                batch = collate(encoded, order[start : start + batch_size], pad_id)
                with autocast():
                    logits = model(
                        input_ids=batch["input_ids"].to(device),
                        attention_mask=batch["attention_mask"].to(device),
                    ).logits
                sums = batch_sums(logits, batch["labels"].to(device))
                for key, value in sums.items():
                    totals[key] += value
                if sums["tokens"]:
                    batch_perplexities.append(_exp(sums["loss_sum"] / sums["tokens"]))
    finally:
        model.train(was_training)
    loss = totals["loss_sum"] / totals["tokens"] if totals["tokens"] else math.nan
    return {
        "loss": loss,
        "perplexity": _exp(loss),
        "next_token_perplexity": (
            sum(batch_perplexities) / len(batch_perplexities) if batch_perplexities else math.nan
        ),
        "token_accuracy": totals["right"] / totals["tokens"] if totals["tokens"] else math.nan,
        "sequence_accuracy": totals["rows_right"] / totals["rows"] if totals["rows"] else math.nan,
    }


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf
