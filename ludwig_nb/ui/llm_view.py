"""What an LLM run's dashboard shows beside any run's: the model, tokens, samples, memory.

Pure functions of the run's ``RunState`` (and the latest GPU sample): one line of facts
(base model, adapter, trainable of total parameters, quantization, tokens trained on, the
data's sequence lengths and how many rows a length limit cut, GPU memory against the
pre-flight estimate when there is one) and a table of the answers generated at the last
evaluation beside the expected ones. Empty for a run that is not an LLM's.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core.state import RunState

__all__ = ["llm_facts_html", "llm_panel_html", "samples_html"]

_GIB = 1 << 30


def _count(n: object) -> str:
    """``"135M"``, ``"1.8k"``, ``"921"`` for a parameter or token count."""
    if not isinstance(n, int | float):
        return "?"
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.0f}"


def _parameters(llm: Mapping[str, Any]) -> str:
    trainable, total = llm.get("trainable"), llm.get("total")
    if not isinstance(trainable, int) or not isinstance(total, int) or total <= 0:
        return ""
    share = 100.0 * trainable / total
    shown = f"{share:.0f}" if share >= 10 else f"{share:.2g}"
    return f"{_count(trainable)} of {_count(total)} parameters train ({shown} %)"


def _lengths(state: RunState) -> str:
    splits = state.sequence_lengths.get("splits")
    if not isinstance(splits, Mapping) or "training" not in splits:
        return ""
    train = splits["training"]
    text = f"sequences up to {train.get('longest', 0):.0f} tokens (mean {train.get('mean', 0):.0f})"
    cut = sum(int(s.get("truncated", 0)) for s in splits.values())
    limit = state.sequence_lengths.get("limit")
    if cut:
        text += f", {cut:,} rows cut to {limit} tokens"
    return text


def _memory(llm: Mapping[str, Any], used: int | None) -> str:
    estimate = llm.get("estimate_bytes")
    if used is None:
        return ""
    text = f"GPU memory {used / _GIB:.1f} GiB"
    if isinstance(estimate, int) and estimate > 0:
        text += f" of {estimate / _GIB:.1f} GiB estimated"
    return text


def llm_facts_html(state: RunState, gpu_memory_used: int | None = None) -> str:
    """One line of the LLM run's facts (empty when the run is not an LLM's)."""
    llm = state.llm
    if not llm:
        return ""
    adapter = str(llm.get("adapter") or "full fine-tuning")
    parts = [
        f"<b>{html.escape(str(llm.get('base_model', '')))}</b>",
        html.escape(adapter),
        _parameters(llm),
        html.escape(str(llm.get("quantization") or "")),
        "gradient checkpointing" if llm.get("gradient_checkpointing") else "",
        f"{_count(state.tokens_seen)} tokens trained on" if state.tokens_seen else "",
        _lengths(state),
        _memory(llm, gpu_memory_used),
    ]
    return '<div class="lnb-llm-facts">' + " · ".join(p for p in parts if p) + "</div>"


def _tail(text: str, width: int = 60) -> str:
    """The end of a prompt (where the question is), one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else "…" + flat[-width:]


def samples_html(state: RunState) -> str:
    """The last evaluation's generated answers beside the expected ones (a small table)."""
    if not state.samples:
        return ""
    rows = []
    for sample in state.samples:
        expected, generated = sample.get("expected", ""), sample.get("generated", "")
        mark = "✓" if expected.strip() == generated.strip() else "✗"
        rows.append(
            "<tr>"
            f"<td>{html.escape(_tail(sample.get('prompt', '')))}</td>"
            f"<td>{html.escape(expected)}</td>"
            f"<td>{html.escape(generated)}</td><td>{mark}</td></tr>"
        )
    head = (
        f"<caption>answers generated after step {state.samples_step}</caption>"
        "<tr><th>prompt</th><th>expected</th><th>generated</th><th></th></tr>"
    )
    return (
        '<table class="lnb-llm-samples" style="font-size:12px;text-align:left">'
        + head
        + "".join(rows)
        + "</table>"
    )


def llm_panel_html(state: RunState, gpu_memory_used: int | None = None) -> str:
    """The facts line and the samples table (empty for a run that is not an LLM's)."""
    return llm_facts_html(state, gpu_memory_used) + samples_html(state)
