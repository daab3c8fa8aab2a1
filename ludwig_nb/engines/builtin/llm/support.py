"""What of Ludwig 0.11's ``model_type: llm`` schema the built-in engine runs.

Built: ``base_model`` (a local folder or a hub id), ``prompt`` (``template``, ``task``),
``adapter`` lora / adalora / ia3 or none (full fine-tuning) with their keys and
``postprocessor.merge_adapter_into_base_model``, ``quantization`` (bitsandbytes, bits 4 / 8
and their keys), ``generation``, ``model_parameters`` (``rope_scaling``,
``neftune_noise_alpha``), ``trust_remote_code``, trainer ``finetune`` and ``none`` (zero-shot)
with batch size (and ``auto``), eval batch size, gradient accumulation, the learning rate
and its scheduler, the torch and bitsandbytes optimizers, gradient clipping, regularization,
``enable_gradient_checkpointing``, ``use_mixed_precision``, ``layers_to_freeze_regex``,
early stopping, checkpoints; ``preprocessing`` splits, sampling and the sequence-length
limits.

Everything else is refused by name at its line (``UnsupportedByEngine``), pointing at
``engine: ludwig``; the reason for each refusal is in the table below. Cheap: no torch, no
transformers (only whether the ``[llm]`` extra is installed).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from ludwig_nb.engines.base import EngineUnavailable
from ludwig_nb.engines.builtin.optimizer_support import (
    BITSANDBYTES_OPTIMIZERS,
    TORCH_OPTIMIZERS,
    check_optimizer,
)

__all__ = ["LLM_ADAPTERS", "LLM_OPTIMIZERS", "check_llm", "require_llm_extra"]

#: (path, section) -> a problem sentence; see capabilities._Reporter
Report = Callable[..., None]

LLM_ADAPTERS = ("lora", "adalora", "ia3")
LLM_OPTIMIZERS = TORCH_OPTIMIZERS + BITSANDBYTES_OPTIMIZERS
_EXTRA = ("transformers", "peft", "accelerate", "tokenizers")

# (path, "is it in use?", what it is and why it is not built)
_PROBES: tuple[tuple[tuple[str, ...], Callable[[Any], bool], str], ...] = (
    (
        ("prompt", "retrieval", "type"),
        lambda v: v is not None,
        "few-shot retrieval (an embedding index over the training set) is not built",
    ),
    (
        ("adapter", "pretrained_adapter_weights"),
        lambda v: v is not None,
        "starting from pretrained adapter weights is not built",
    ),
    (("trainer", "compile"), bool, "torch.compile of the model is not built"),
    (
        ("trainer", "enable_profiling"),
        bool,
        "the torch profiler (use --profile-steps N on the cell, or profile_steps=N)",
    ),
    (("trainer", "bucketing_field"), lambda v: v is not None, "bucketing is not built"),
    (
        ("trainer", "increase_batch_size_on_plateau"),
        bool,
        "increasing the batch size on plateau is not built",
    ),
    (("trainer", "eval_steps"), lambda v: v is not None, "limiting evaluation steps is not built"),
    (
        ("trainer", "effective_batch_size"),
        lambda v: v not in (None, "auto"),
        "a fixed effective_batch_size is not built (set gradient_accumulation_steps)",
    ),
    (
        ("trainer", "learning_rate"),
        lambda v: v == "auto",
        "learning_rate: auto (a learning-rate search) is not built",
    ),
    (
        ("preprocessing", "oversample_minority"),
        lambda v: v is not None,
        "oversampling is not built for text outputs",
    ),
    (
        ("preprocessing", "undersample_majority"),
        lambda v: v is not None,
        "undersampling is not built for text outputs",
    ),
)


def require_llm_extra() -> None:
    """Raise ``EngineUnavailable`` (what to install) when the ``[llm]`` extra is missing."""
    missing = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise EngineUnavailable(
            f"model_type: llm on the built-in engine needs {', '.join(missing)}: "
            'pip install "ludwig_nb[llm]"'
        )


def check_llm(cfg: dict[str, Any], report: Report) -> None:
    """Report what the built-in engine cannot run of the LLM config ``cfg``."""
    for path, in_use, what in _PROBES:
        value: Any = cfg
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if in_use(value):
            report(path, what)
    adapter = cfg.get("adapter") or {}
    if adapter and adapter.get("type") not in LLM_ADAPTERS:
        report(
            ("adapter", "type"),
            f"the {adapter.get('type')} adapter is not built",
            also=LLM_ADAPTERS,
        )
    for i, feature in enumerate(cfg.get("output_features") or []):
        if feature.get("type") != "text":
            report(
                ("output_features", i, "type"),
                f"an LLM's {feature.get('type')} output (a classifier head) is not built",
                also=("text",),
            )
    trainer = cfg.get("trainer") or {}
    optimizer = trainer.get("optimizer") or {}
    if optimizer.get("type") is not None:
        check_optimizer(optimizer, report)
    split = ((cfg.get("preprocessing") or {}).get("split") or {}).get("type")
    if split not in (None, "random", "fixed", "stratify"):
        report(("preprocessing", "split", "type"), f"the {split} split is not built")
