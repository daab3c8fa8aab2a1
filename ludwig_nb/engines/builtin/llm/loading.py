"""Load what an LLM run trains: the tokenizer, the base model, its quantization and adapter.

As Ludwig 0.11 loads it (``ludwig/utils/llm_utils.py``): ``AutoModelForCausalLM`` in float32,
or quantized by bitsandbytes (``quantization``, compute dtype as configured) and prepared with
PEFT's ``prepare_model_for_kbit_training``; then the PEFT adapter of ``adapter`` (none: every
weight trains). Everything loads from a local folder with ``local_files_only``: no connection
is attempted (engines/hub.py finds or fetches the folder first). Nothing here names a module,
an attention kind or a position scheme of a particular architecture: LoRA's and IA3's default
targets are PEFT's own table for the architecture, else every linear layer.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "Loaded",
    "ParameterCounts",
    "adapter_config",
    "count_parameters",
    "load_base",
    "load_tokenizer",
    "wrap_adapter",
]


@dataclasses.dataclass(frozen=True)
class ParameterCounts:
    """Parameters of the model as trained: ``trainable`` of ``total`` (counts, not bytes)."""

    trainable: int
    total: int


@dataclasses.dataclass
class Loaded:
    """The model and tokenizer of a run (``model`` is a PEFT model when an adapter is set)."""

    model: Any
    tokenizer: Any
    path: Path


def quiet_transformers() -> None:
    """Turn off transformers' progress bars (loading, saving).

    A run's thread never prints; its dashboard says what it does.
    """
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    # PEFT 0.21 reads transformers 5's deprecated alias on every adapter it wraps: noise
    warnings.filterwarnings(
        "ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning
    )


def load_tokenizer(path: Path, trust_remote_code: bool = False) -> Any:
    """The tokenizer in ``path``; a pad token is set to end-of-sequence when it has none.

    (Ludwig does the same: many causal LMs ship without a pad token.)
    """
    from transformers import AutoTokenizer

    quiet_transformers()
    tokenizer = AutoTokenizer.from_pretrained(
        str(path), local_files_only=True, trust_remote_code=trust_remote_code
    )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def quantization_config(section: Mapping[str, Any]) -> Any:
    """Bitsandbytes' config for Ludwig's ``quantization`` section (bits 4 or 8)."""
    from transformers import BitsAndBytesConfig

    bits = int(section.get("bits") or 4)
    return BitsAndBytesConfig(  # type: ignore[no-untyped-call]
        load_in_4bit=bits == 4,
        load_in_8bit=bits == 8,
        llm_int8_threshold=float(section.get("llm_int8_threshold", 6.0)),
        llm_int8_has_fp16_weight=bool(section.get("llm_int8_has_fp16_weight", False)),
        bnb_4bit_compute_dtype=compute_dtype(section),
        bnb_4bit_use_double_quant=bool(section.get("bnb_4bit_use_double_quant", True)),
        bnb_4bit_quant_type=str(section.get("bnb_4bit_quant_type") or "nf4"),
    )


def compute_dtype(section: Mapping[str, Any]) -> torch.dtype:
    """``bnb_4bit_compute_dtype`` as a torch dtype (Ludwig's default: float16)."""
    return getattr(torch, str(section.get("bnb_4bit_compute_dtype") or "float16"))  # type: ignore[no-any-return]


def load_base(
    path: Path, config: Mapping[str, Any], device: torch.device, *, gradient_checkpointing: bool
) -> Any:
    """The base causal LM of ``config`` from ``path``, on ``device``, ready to train.

    Quantized (``quantization``) on ``device`` and prepared for k-bit training; else float32.
    ``model_parameters.rope_scaling`` is merged into the model's config when set.
    """
    from transformers import AutoConfig, AutoModelForCausalLM

    trust = bool(config.get("trust_remote_code", False))
    kwargs: dict[str, Any] = {"local_files_only": True, "trust_remote_code": trust}
    model_config = AutoConfig.from_pretrained(str(path), **kwargs)
    rope = {k: v for k, v in _rope_scaling(config).items() if v is not None}
    if rope:
        model_config.rope_scaling = {**(getattr(model_config, "rope_scaling", None) or {}), **rope}
    quantization = config.get("quantization")
    if quantization:
        kwargs.update(
            dtype=compute_dtype(quantization),
            quantization_config=quantization_config(quantization),
            device_map={"": device},
        )
    else:
        kwargs["dtype"] = torch.float32
    model = AutoModelForCausalLM.from_pretrained(str(path), config=model_config, **kwargs)
    if quantization:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(  # type: ignore[no-untyped-call]
            model, use_gradient_checkpointing=gradient_checkpointing
        )
    else:
        model = model.to(device)  # type: ignore[arg-type]  # a torch device is what it takes
    if gradient_checkpointing:
        enable_gradient_checkpointing(model)
    return model


def _rope_scaling(config: Mapping[str, Any]) -> dict[str, Any]:
    params = config.get("model_parameters") or {}
    return dict(params.get("rope_scaling") or {})


def enable_gradient_checkpointing(model: Any) -> None:
    """Recompute activations in the backward pass (less memory, about a third more time).

    Inputs require grad so that a frozen embedding (an adapter run) still lets gradients reach
    the checkpointed blocks.
    """
    options = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):  # its name since transformers 5.x
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)
    model.config.use_cache = False
    if hasattr(model, "enable_input_require_grads"):
        model.enable_input_require_grads()


def adapter_config(section: Mapping[str, Any], model: Any, total_steps: int) -> Any:
    """PEFT's config for Ludwig's ``adapter`` section (lora, adalora, ia3).

    ``target_modules`` null takes PEFT's default for the architecture, or every linear layer
    when PEFT has none. Raises ``ValueError`` for a type that is not built.
    """
    import peft

    kind = section.get("type")
    common: dict[str, Any] = {"task_type": peft.TaskType.CAUSAL_LM}
    if kind in ("lora", "adalora"):
        r = int(section.get("r") or 8)
        lora: dict[str, Any] = {
            **common,
            "r": r,
            "lora_alpha": int(section.get("alpha") or 2 * r),  # Ludwig's default: 2 x r
            "lora_dropout": float(section.get("dropout") or 0.0),
            "bias": str(section.get("bias_type") or "none"),
            "target_modules": _targets(section, model, "lora"),
        }
        lora["fan_in_fan_out"] = _transposed(model, lora["target_modules"])
        if kind == "lora":
            lora.update(
                use_rslora=bool(section.get("use_rslora")), use_dora=bool(section.get("use_dora"))
            )
            return peft.LoraConfig(**lora)
        return peft.AdaLoraConfig(**lora, **_adalora(section, total_steps))
    if kind == "ia3":
        return peft.IA3Config(
            **common,
            target_modules=_targets(section, model, "ia3"),
            feedforward_modules=section.get("feedforward_modules"),
            fan_in_fan_out=bool(section.get("fan_in_fan_out"))
            or _transposed(model, _targets(section, model, "ia3")),
            modules_to_save=section.get("modules_to_save"),
            init_ia3_weights=bool(section.get("init_ia3_weights", True)),
        )
    raise ValueError(f"adapter type {kind!r} is not built")


def _adalora(section: Mapping[str, Any], total_steps: int) -> dict[str, Any]:
    """AdaLoRA's schedule keys; ``total_step`` is the run's step count when left at 10000."""
    total = int(section.get("total_step") or total_steps)
    tinit, tfinal = int(section.get("tinit") or 0), int(section.get("tfinal") or 0)
    if tinit + tfinal >= total:  # PEFT refuses a budget with no room: keep Ludwig's intent
        tinit, tfinal = 0, 0
    return {
        "target_r": int(section.get("target_r") or 8),
        "init_r": int(section.get("init_r") or 12),
        "tinit": tinit,
        "tfinal": tfinal,
        "deltaT": int(section.get("delta_t") or 1),
        "beta1": float(section.get("beta1", 0.85)),
        "beta2": float(section.get("beta2", 0.85)),
        "orth_reg_weight": float(section.get("orth_reg_weight", 0.5)),
        "total_step": total,
        "rank_pattern": section.get("rank_pattern"),
    }


def _targets(section: Mapping[str, Any], model: Any, kind: str) -> Any:
    """The adapter's target modules: the config's, PEFT's table's, else all linear layers."""
    given = section.get("target_modules")
    if given:
        return list(given)
    from peft.utils import constants

    tables: dict[str, Any] = {
        "lora": constants.TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING,
        "ia3": constants.TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING,
    }
    table = tables[kind]
    found = table.get(getattr(model.config, "model_type", ""))
    return list(found) if found else "all-linear"


def _transposed(model: Any, targets: Any) -> bool:
    """Whether the targeted layers store their weight transposed.

    transformers' ``Conv1D`` (GPT-2's family): PEFT must then be told ``fan_in_fan_out``.
    """
    from transformers.pytorch_utils import Conv1D

    def targeted(name: str) -> bool:
        if targets == "all-linear":
            return True
        return any(name == t or name.endswith(f".{t}") for t in targets)

    return any(isinstance(m, Conv1D) and targeted(n) for n, m in model.named_modules())


def wrap_adapter(model: Any, section: Mapping[str, Any] | None, total_steps: int) -> Any:
    """``model`` with the adapter of ``section`` (PEFT), or unchanged for full fine-tuning."""
    if not section:
        return model
    import peft

    return peft.get_peft_model(model, adapter_config(section, model, total_steps))


def freeze_matching(model: Any, pattern: str | None) -> int:
    """``trainer.layers_to_freeze_regex``: freeze every parameter whose name matches.

    Returns how many parameter tensors were frozen.
    """
    if not pattern:
        return 0
    compiled = re.compile(pattern)
    frozen = 0
    for name, param in model.named_parameters():
        if compiled.search(name) and param.requires_grad:
            param.requires_grad_(False)
            frozen += 1
    return frozen


def count_parameters(model: Any) -> ParameterCounts:
    """Trainable and total parameters (a 4-bit weight counts its parameters, not its bytes)."""
    trainable = total = 0
    for param in model.parameters():
        n = param.numel()
        if hasattr(param, "quant_state") or getattr(param, "__class__", type).__name__ in (
            "Params4bit",
        ):
            n *= 2  # bitsandbytes packs two 4-bit values into each stored byte
        total += n
        trainable += n if param.requires_grad else 0
    return ParameterCounts(trainable=trainable, total=total)
