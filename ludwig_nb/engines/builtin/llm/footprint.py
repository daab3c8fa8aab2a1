"""The memory pre-flight of an LLM config: what a training step needs on a GPU, before one runs.

:func:`estimate_memory` reads the base model's ``config.json`` (a local folder or the Hugging
Face cache; a hub id that is not cached is fetched only for its config and tokenizer, and
fails within seconds offline), counts its parameters on the meta device (no weights load),
tokenizes the training data to find its longest row (a batch padded to it is the peak), and
scales the probes of ``probe.py`` to the real model: weights as stored (4-bit, 8-bit, 16/32),
gradients, optimizer states, activations for the batch's rows at that length, the backward
pass's largest transient (the float32 gradient of the logits) or the optimizer step's, and the
CUDA context. The total is checked against this machine's GPU (if any) and the table of common
GPUs (``core/memory_estimate.py``), with what to change where it does not fit (gradient
checkpointing, 4-bit quantization with LoRA, half the rows with twice the accumulation,
shorter sequences), each costed the same way.

The training time on those GPUs is an extrapolation: the run's padded tokens (every epoch's
batches in the engine's order) x the model's FLOPs per token, over each GPU's peak dense
FLOP/s at :data:`ASSUMED_UTILISATION`. This machine's own time comes from a pilot
(``ludwig_nb.estimate``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ludwig_nb.core.memory_estimate import GPUS, Advice, GpuFit, GpuSpec, MemoryEstimate
from ludwig_nb.engines.builtin.llm.probe import Footprint, ProbeSpec, probe_footprint

__all__ = [
    "ASSUMED_UTILISATION",
    "CUDA_CONTEXT_BYTES",
    "DeviceMemory",
    "estimate_for_run",
    "estimate_memory",
    "footprint",
    "train_flops",
]

#: the CUDA context, cuBLAS workspace and kernels outside PyTorch's allocator (bytes): a
#: typical figure for recent GPUs and drivers, replaced by a measurement on a GPU machine
CUDA_CONTEXT_BYTES = 512 << 20
#: share of a GPU's peak dense FLOP/s a fine-tuning step reaches, for the time extrapolation
ASSUMED_UTILISATION = 0.30
_MIB = 1 << 20
_FOOTPRINTS: dict[tuple[Any, ...], Footprint] = {}


@dataclasses.dataclass(frozen=True)
class DeviceMemory:
    """This machine's GPU: its ``name`` and ``total_bytes``.

    ``context_bytes``: the memory used outside PyTorch's allocator (measured). Both are None
    where there is no GPU (``name`` then says so).
    """

    name: str
    total_bytes: int | None = None
    context_bytes: int | None = None


def this_device() -> DeviceMemory:
    """The first CUDA GPU here, its memory and its context's; or "no GPU on this machine"."""
    import torch

    if not torch.cuda.is_available():
        return DeviceMemory("no GPU on this machine (the estimate is for the GPUs below)")
    torch.cuda.init()  # type: ignore[no-untyped-call]
    free, total = torch.cuda.mem_get_info(0)
    context = max(0, total - free - torch.cuda.memory_reserved(0))
    return DeviceMemory(torch.cuda.get_device_name(0), int(total), int(context) or None)


def footprint(spec: ProbeSpec) -> Footprint:
    """:func:`probe.probe_footprint`, remembered per model and config for this process."""
    key = (
        str(spec.path),
        spec.rows <= 1,
        repr(spec.config.get("adapter")),
        repr(spec.config.get("quantization")),
        spec.gradient_checkpointing,
        spec.mixed_precision,
        repr((spec.config.get("trainer") or {}).get("optimizer")),
        bool(spec.config.get("trust_remote_code", False)),
    )
    found = _FOOTPRINTS.get(key)
    if found is None:
        found = _FOOTPRINTS[key] = probe_footprint(spec)
    return found


def estimate_memory(
    config: Mapping[str, Any],
    dataset: Any = None,
    *,
    lengths: Sequence[int] | None = None,
    path: Path | None = None,
    device: DeviceMemory | None = None,
    seed: int | None = None,
) -> MemoryEstimate:
    """The memory estimate of the rendered LLM ``config`` on the training rows of ``dataset``.

    ``lengths``: the training rows' token lengths when already known (then ``dataset`` is not
    read); ``path``: the base model's folder when already resolved; ``device``: this
    machine's GPU (found when None).

    Raises:
        RuntimeError: the base model cannot be had (not a folder, not cached, hub offline).
        DataError: the dataset or one of its columns is missing.
        ValueError: the model's config cannot be shrunk (no layer count or vocabulary).
    """
    from ludwig_nb.engines.base import config_seed

    path = path or _model_folder(str(config.get("base_model") or ""))
    seed = config_seed(config) if seed is None else seed
    if lengths is None:
        lengths = _training_lengths(config, dataset, path, seed)
    trainer = config.get("trainer") or {}
    size = trainer.get("batch_size")
    rows = int(size) if isinstance(size, int) and size > 0 else 1
    longest = max(lengths or [1])
    plan = _Plan(config, lengths, rows, seed)
    spec = ProbeSpec(path, config, rows, total_steps=max(1, plan.total_steps))
    found = footprint(spec)
    device = device or this_device()
    parts = _parts(found, rows, longest, device)
    notes = _notes(found, size, device, spec)
    flops = train_flops(found, plan.padded_tokens, spec.gradient_checkpointing)
    counts = _meta_counts(path, config, spec)
    if abs(counts[0] - found.parameters) > 0.01 * counts[0]:
        notes += (
            f"the meta-device count ({counts[0]:,} parameters) and the probes' "
            f"({found.parameters:,}) differ: the model's layers are not all alike",
        )
    return MemoryEstimate(
        parts=parts,
        model=str(config.get("base_model") or path),
        parameters=counts[0],
        trainable=counts[1],
        batch_size=rows,
        sequence_length=longest,
        quantization=f"{int(config['quantization'].get('bits') or 4)}-bit"
        if config.get("quantization")
        else "",
        gradient_checkpointing=spec.gradient_checkpointing,
        device=device.name,
        device_bytes=device.total_bytes,
        gpus=tuple(_fit(gpu, sum(parts.values()), flops, _half(config)) for gpu in GPUS),
        advice=tuple(_advice(config, lengths, rows, found, path, device)),
        notes=notes,
    )


def estimate_for_run(
    config: Mapping[str, Any],
    lengths: Sequence[int],
    path: Path,
    device: Any,
    *,
    force: bool = False,
) -> int | None:
    """The total a run shows beside its GPU memory before its first step (bytes), or None.

    Made when the run trains on a GPU (``force``: anywhere); never raises (a failed estimate
    is logged and the run goes on without it). ``device``: the run's torch device.
    """
    import logging

    if getattr(device, "type", "cpu") != "cuda" and not force:
        return None
    try:
        return estimate_memory(config, lengths=lengths, path=path).total_bytes
    except Exception:  # the run must not fail for its estimate
        logging.getLogger(__name__).warning("no memory estimate for this run", exc_info=True)
        return None


def _parts(found: Footprint, rows: int, longest: int, device: DeviceMemory) -> dict[str, int]:
    """Bytes per part (the module docstring) for a batch of ``rows`` x ``longest`` tokens."""
    activations = found.activations(rows, longest)
    backward = rows * longest * found.logits_per_token
    step = found.optimizer // 2 if found.trainable else 0  # foreach temporaries
    return {
        "weights": found.weights,
        "gradients": found.gradients,
        "optimizer": found.optimizer,
        "activations": activations,
        "workspace": max(backward, step - activations, 0),
        "cuda_context": device.context_bytes or CUDA_CONTEXT_BYTES,
    }


def _notes(found: Footprint, size: Any, device: DeviceMemory, spec: ProbeSpec) -> tuple[str, ...]:
    notes = [
        f"weights, gradients, optimizer states and activations measured on 1- and 2-layer "
        f"copies of the model (CPU, random weights) and scaled to its {found.layers} layers "
        f"(activation model within {found.fit_error:.1%} of the measured passes)",
        "the backward workspace (the logits' float32 gradient) is estimated, not measured",
    ]
    if device.context_bytes is None:
        notes.append(f"CUDA context assumed {CUDA_CONTEXT_BYTES // _MIB} MiB (no GPU measured)")
    if not (isinstance(size, int) and size > 0):
        notes.append("batch_size auto: estimated for 1 row (auto picks the most that fit)")
    if spec.gradient_checkpointing:
        notes.append("gradient checkpointing: the checkpoints plus one recomputed layer")
    if spec.mixed_precision:
        notes.append("mixed precision metered under the CPU's bfloat16 autocast")
    return tuple(notes)


def train_flops(found: Footprint, padded_tokens: int, checkpointing: bool) -> float:
    """FLOPs of training on ``padded_tokens`` tokens.

    Forward ``2 N``, backward ``2 N`` for the activations' gradients plus ``2 N_trainable``
    for the weights', recomputation ``2 N`` more with checkpointing (N: parameters).
    """
    per_token = 4 * found.parameters + 2 * found.trainable
    if checkpointing:
        per_token += 2 * found.parameters
    return float(per_token) * padded_tokens


def _half(config: Mapping[str, Any]) -> bool:
    """Does the run compute in 16 bits (mixed precision, or a quantized model's compute)?"""
    trainer = config.get("trainer") or {}
    return bool(trainer.get("use_mixed_precision") or config.get("quantization"))


def _fit(gpu: GpuSpec, total: int, flops: float, half: bool) -> GpuFit:
    peak = gpu.half_flops if half else gpu.fp32_flops
    seconds = flops / (peak * ASSUMED_UTILISATION) if flops > 0 else None
    precision = "16-bit tensor cores" if half else "float32"
    basis = (
        f"an extrapolation: the run's FLOPs over the GPU's peak {precision} FLOP/s "
        f"at {ASSUMED_UTILISATION:.0%} utilisation (training steps only)"
    )
    return GpuFit(
        gpu.name, gpu.total_bytes, total <= gpu.total_bytes, gpu.total_bytes - total, seconds, basis
    )


class _Plan:
    """The run's steps and padded tokens: every epoch's batches in the engine's order."""

    def __init__(self, config: Mapping[str, Any], lengths: Sequence[int], rows: int, seed: int):
        from ludwig_nb.engines.builtin.device import batch_order
        from ludwig_nb.engines.builtin.llm.tokens import padded_tokens
        from ludwig_nb.engines.builtin.schedule import plan_training

        trainer = config.get("trainer") or {}
        plan = plan_training(trainer, max(1, len(lengths)), rows)
        self.total_steps = plan.total_steps if trainer.get("type") != "none" else 0
        shuffle = bool(trainer.get("should_shuffle", True))
        tokens, steps = 0, 0
        for epoch in range(plan.epochs):
            order = batch_order(len(lengths), seed, epoch, shuffle).tolist() if lengths else []
            per_step = padded_tokens(lengths, order, rows) if order else []
            take = min(len(per_step), self.total_steps - steps)
            tokens += sum(per_step[:take])
            steps += take
        self.padded_tokens = tokens


def _advice(
    config: Mapping[str, Any],
    lengths: Sequence[int],
    rows: int,
    found: Footprint,
    path: Path,
    device: DeviceMemory,
) -> list[Advice]:
    """Changes that lower the total, each with its total, when it misses a GPU."""
    total = sum(_parts(found, rows, max(lengths or [1]), device).values())
    sizes = [g.total_bytes for g in GPUS] + ([device.total_bytes] if device.total_bytes else [])
    if all(total <= s for s in sizes):
        return []
    longest = max(lengths or [1])
    out = []
    for change, changed, new_rows, new_longest in _changes(config, lengths, rows):
        spec = ProbeSpec(path, changed, new_rows)
        try:
            other = found if changed is config else footprint(spec)
        except Exception:  # advice is best effort; the estimate stands
            continue
        need = sum(_parts(other, new_rows, new_longest or longest, device).values())
        if need < total:
            out.append(Advice(change, need, _fitting(need, device)))
    return out


def _changes(
    config: Mapping[str, Any], lengths: Sequence[int], rows: int
) -> list[tuple[str, Mapping[str, Any], int, int | None]]:
    """``(what to write, the changed config, rows, longest row or None)`` per option."""
    trainer = dict(config.get("trainer") or {})
    out: list[tuple[str, Mapping[str, Any], int, int | None]] = []
    if not trainer.get("enable_gradient_checkpointing"):
        changed = {**config, "trainer": {**trainer, "enable_gradient_checkpointing": True}}
        out.append(("trainer: {enable_gradient_checkpointing: true}", changed, rows, None))
    if not config.get("quantization"):
        adapter = config.get("adapter") or {"type": "lora", "r": 8}
        changed = {**config, "quantization": {"bits": 4}, "adapter": adapter}
        words = "quantization: {bits: 4}" + (
            "" if config.get("adapter") else " with adapter: {type: lora}"
        )
        out.append((words, changed, rows, None))
    if rows > 1:
        given = trainer.get("gradient_accumulation_steps")
        accumulation = (given if isinstance(given, int) and given > 0 else 1) * 2
        words = f"trainer: {{batch_size: {rows // 2}, gradient_accumulation_steps: {accumulation}}}"
        out.append((words, config, rows // 2, None))
    if lengths:
        ordered = sorted(lengths)
        shorter = ordered[int(0.95 * (len(ordered) - 1))]
        if shorter < ordered[-1]:
            cut = sum(1 for n in lengths if n > shorter)
            words = (
                f"preprocessing: {{global_max_sequence_length: {shorter}}} "
                f"(truncates {cut} of {len(lengths)} rows)"
            )
            out.append((words, config, rows, shorter))
    return out


def _fitting(total: int, device: DeviceMemory) -> tuple[str, ...]:
    names = [g.name for g in GPUS if total <= g.total_bytes]
    if device.total_bytes is not None and total <= device.total_bytes:
        names.insert(0, "this machine's GPU")
    return tuple(names)


def _model_folder(name: str) -> Path:
    """The base model's folder: local, cached, or its config and tokenizer fetched now."""
    from ludwig_nb.engines.hub import check_base_model

    source = check_base_model(name)  # fails fast, with what to do, when it cannot be had
    if source.path is not None:
        return source.path
    from huggingface_hub import snapshot_download

    patterns = ["*.json", "tokenizer*", "*.model", "*.txt", "*.tiktoken"]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns))
    except Exception as err:  # the hub's many error types: one message for the user
        raise RuntimeError(f"could not fetch the config of base_model {name!r}: {err}") from err


def _training_lengths(config: Mapping[str, Any], dataset: Any, path: Path, seed: int) -> list[int]:
    """Token lengths of the training rows, tokenized and truncated as the run will."""
    from ludwig_nb.engines.builtin.llm import loading
    from ludwig_nb.engines.builtin.llm.data import check_llm_data, split_frames, texts

    if dataset is None:
        return []
    tokenizer = loading.load_tokenizer(path, bool(config.get("trust_remote_code", False)))
    frames = split_frames(config, check_llm_data(config, dataset), seed)
    return texts(config, frames["training"], tokenizer).encoded.lengths


def _meta_counts(path: Path, config: Mapping[str, Any], spec: ProbeSpec) -> tuple[int, int]:
    """(parameters, trainable) of the full model built on the meta device (no weights)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from ludwig_nb.engines.builtin.llm import loading

    trust = bool(config.get("trust_remote_code", False))
    model_config = AutoConfig.from_pretrained(
        str(path), local_files_only=True, trust_remote_code=trust
    )
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]
            model_config, trust_remote_code=trust
        )
    loading.freeze_matching(model, (config.get("trainer") or {}).get("layers_to_freeze_regex"))
    model = loading.wrap_adapter(model, config.get("adapter"), spec.total_steps)
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total, trainable
