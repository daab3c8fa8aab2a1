"""Measure a causal LM's training memory on shrunk copies of it, and scale to the real one.

Two copies with 1 and 2 of its layers (full width; a vocabulary of 2,048 and 4,096 tokens
when the real one is larger) are loaded exactly as a run loads the model (``loading.py``:
dtype, quantization and PEFT's k-bit preparation, the adapter, gradient checkpointing) on
the CPU, with random weights. On each, a few forward and backward passes of padded batches
(2-3 rows x 8-24 tokens, or 1 row when the run trains one row at a time) are metered
(``saved_tensors.py``: the peak bytes autograd holds for backward), and one optimizer step
counts its states. Everything the run needs then follows from structure, not from a table
of architectures:

* weights, trainable parameters, gradients and optimizer states are linear in the layers
  and in the vocabulary, so two layer counts and two vocabularies give them exactly;
* activations are ``layers x (a B L + b B L^2 + c L + k) + (d B L + e B L^2 + f L + g)`` (B
  rows of L tokens): the ``L^2`` terms are attention's scores when they are materialised
  (eager attention, e.g. a quantized Ludwig config) and the padding mask; ``k`` is what a
  layer saves whatever the batch (autocast's 16-bit copies of frozen weights). The
  coefficients are fitted on the ten metered passes (one row:
  ``layers x (a L + b L^2 + k) + (d L + e L^2 + g)``). With gradient checkpointing the peak
  is the larger of two such models, fitted apart: what the forward pass leaves held (the
  output layer's logits among it, which grow with the vocabulary) and what is held while a
  layer is recomputed (by then the logits are gone).

Gradient checkpointing is metered with reentrant checkpointing, whose recomputation runs
through the same hooks (the peak is then the checkpoints plus one recomputed layer; the
non-reentrant kind a run uses holds no more). Mixed precision is metered under the CPU's
autocast in bfloat16. Nothing here names a module, an attention kind or a position scheme.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ludwig_nb.engines.builtin.llm import loading
from ludwig_nb.engines.builtin.llm.saved_tensors import SavedTensorMeter, storage_bytes

__all__ = [
    "Footprint",
    "ProbeSpec",
    "activation_features",
    "probe_footprint",
    "reentrant_checkpointing",
]

#: vocabularies of the shrunk copies when the real one is larger than the second
PROBE_VOCABS = (2048, 4096)
#: (rows, tokens) of the metered batches, by whether the run trains one row at a time
_SHAPES_ONE = ((1, 8), (1, 16), (1, 24), (1, 32))
_SHAPES_MANY = ((2, 8), (2, 16), (2, 24), (3, 8), (3, 16))


@dataclasses.dataclass(frozen=True)
class ProbeSpec:
    """What to meter.

    ``path``: the base model's folder (its ``config.json`` is read; its weights are not).
    ``config``: the rendered Ludwig config (``quantization``, ``adapter``, ``trainer``).
    ``rows``: rows in one forward pass (the run's batch size). ``total_steps``: AdaLoRA's
    budget.
    """

    path: Path
    config: Mapping[str, Any]
    rows: int
    total_steps: int = 1000

    @property
    def gradient_checkpointing(self) -> bool:
        """``trainer.enable_gradient_checkpointing``."""
        return bool((self.config.get("trainer") or {}).get("enable_gradient_checkpointing"))

    @property
    def mixed_precision(self) -> bool:
        """``trainer.use_mixed_precision`` (autocast on a GPU)."""
        return bool((self.config.get("trainer") or {}).get("use_mixed_precision"))


@dataclasses.dataclass(frozen=True)
class Footprint:
    """A model's training memory, scaled from the probes to its real size.

    Bytes: ``weights`` (as stored), ``gradients`` (of the trainable parameters),
    ``optimizer`` (states after a step). Counts: ``parameters``, ``trainable``.
    ``coefficients`` of :func:`activation_features` (for ``one_row`` batches or not) give
    the bytes held at the forward pass's end, ``recompute`` those held while checkpointing
    recomputes a layer (empty without checkpointing); :meth:`activations` is the larger.
    ``fit_error`` is the largest relative miss of those models on the metered passes;
    ``logits_per_token`` is the bytes of one token's logits in float32 (the largest gradient
    the backward pass makes at once).
    """

    layers: int
    vocab: int
    weights: int
    gradients: int
    optimizer: int
    parameters: int
    trainable: int
    coefficients: tuple[float, ...]
    one_row: bool
    fit_error: float
    logits_per_token: int
    largest_weight: int = 0
    recompute: tuple[float, ...] = ()

    def activations(self, rows: int, tokens: int) -> int:
        """Peak bytes held for backward by a batch of ``rows`` rows padded to ``tokens``."""
        features = activation_features(self.layers, rows, tokens, self.one_row)
        peaks = [
            sum(c * f for c, f in zip(model, features, strict=True))
            for model in (self.coefficients, self.recompute)
            if model
        ]
        return max(0, round(max(peaks)))


def activation_features(layers: int, rows: int, tokens: int, one_row: bool) -> list[float]:
    """The terms of the activation model (see the module docstring) for one batch."""
    n, b, t = float(layers), float(rows), float(tokens)
    if one_row:
        return [n * t, n * t * t, n, t, t * t, 1.0]
    return [n * b * t, n * b * t * t, n * t, n, b * t, b * t * t, t, 1.0]


@dataclasses.dataclass(frozen=True)
class _Measured:
    """What one shrunk copy measured."""

    weights: int
    gradients: int
    optimizer: int
    parameters: int
    trainable: int
    largest_weight: int
    passes: list[tuple[int, int, int, int]]  # (rows, tokens, forward's end, recompute peak)


def probe_footprint(spec: ProbeSpec) -> Footprint:
    """Meter shrunk copies of ``spec``'s model and scale them (the module docstring).

    Raises:
        ValueError: the model's config has no layer count or vocabulary size to shrink.
    """
    from transformers import AutoConfig

    base = AutoConfig.from_pretrained(
        str(spec.path),
        local_files_only=True,
        trust_remote_code=bool(spec.config.get("trust_remote_code", False)),
    )
    layers = _get(base, "num_hidden_layers")
    vocab = _get(base, "vocab_size")
    vocabs = (vocab,) if vocab <= PROBE_VOCABS[1] else PROBE_VOCABS
    one_row = spec.rows <= 1
    shapes = _SHAPES_ONE if one_row else _SHAPES_MANY
    measured = {
        (n, v): _measure(_shrunk(base, n, v, layers), spec, shapes) for n in (1, 2) for v in vocabs
    }

    def scaled(get: Any) -> float:
        return _scale(lambda n, v: float(get(measured[n, v])), layers, vocab, vocabs)

    rows: list[list[float]] = []
    forward: list[float] = []
    recompute: list[float] = []
    for i, (b, t, *_) in enumerate(measured[1, vocabs[0]].passes):
        for n in (1, 2):
            rows.append(activation_features(n, b, t, one_row))
            for j, out in ((2, forward), (3, recompute)):
                out.append(
                    _scale(
                        lambda _n, v, n=n, i=i, j=j: measured[n, v].passes[i][j], 1, vocab, vocabs
                    )
                )
    coefficients, error = _fit(rows, forward)
    recomputed, recompute_error = _fit(rows, recompute) if any(recompute) else ([], 0.0)
    return Footprint(
        layers=layers,
        vocab=vocab,
        weights=round(scaled(lambda m: m.weights)),
        gradients=round(scaled(lambda m: m.gradients)),
        optimizer=round(scaled(lambda m: m.optimizer)),
        parameters=round(scaled(lambda m: m.parameters)),
        trainable=round(scaled(lambda m: m.trainable)),
        coefficients=tuple(coefficients),
        recompute=tuple(recomputed),
        one_row=one_row,
        fit_error=max(error, recompute_error),
        logits_per_token=4 * vocab,
        largest_weight=max(m.largest_weight for m in measured.values()),
    )


def _get(config: Any, name: str) -> int:
    value = getattr(config, name, None)
    if not isinstance(value, int) or value < 1:
        raise ValueError(
            f"the model's config.json has no {name}: its memory cannot be estimated by "
            "shrinking it (train it and read the GPU gauges instead)"
        )
    return value


def _scale(q: Any, layers: int, vocab: int, vocabs: Sequence[int]) -> float:
    """``q(n, v)`` known at n = 1, 2 and the probe vocabularies, at ``layers`` and ``vocab``.

    Linear in both (the vocabulary only sizes the embeddings and the output layer).
    """
    v1 = vocabs[0]
    value = q(1, v1) + (layers - 1) * (q(2, v1) - q(1, v1))
    if len(vocabs) > 1:
        v2 = vocabs[1]
        value += (vocab - v1) * (q(1, v2) - q(1, v1)) / (v2 - v1)
    return float(value)


def _fit(rows: list[list[float]], peaks: list[float]) -> tuple[list[float], float]:
    """Least squares of ``peaks`` on ``rows``; returns the coefficients and the largest miss."""
    x = torch.tensor(rows, dtype=torch.float64)
    y = torch.tensor(peaks, dtype=torch.float64).unsqueeze(1)
    scale = x.abs().amax(dim=0).clamp(min=1.0)  # columns differ by orders of magnitude
    solution = torch.linalg.lstsq(x / scale, y).solution.squeeze(1) / scale
    fitted = x @ solution
    miss = max(abs(float(f) - p) / p if p > 0 else 0.0 for f, p in zip(fitted, peaks, strict=True))
    return [float(c) for c in solution], miss


def _shrunk(config: Any, layers: int, vocab: int, full_layers: int) -> Any:
    """A copy of ``config`` with ``layers`` layers and ``vocab`` tokens.

    Per-layer lists (as long as the layer count) are cut to match; special token ids
    outside the vocabulary are moved inside it.
    """
    small = copy.deepcopy(config)
    for name, value in list(vars(small).items()):
        if isinstance(value, list | tuple) and len(value) == full_layers and full_layers > 1:
            setattr(small, name, type(value)(value[:layers]))
    small.num_hidden_layers = layers
    small.vocab_size = vocab
    for name in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
        value = getattr(small, name, None)
        if isinstance(value, int) and value >= vocab:
            setattr(small, name, vocab - 1)
        elif isinstance(value, list):
            setattr(small, name, [min(v, vocab - 1) for v in value])
    return small


def _measure(config: Any, spec: ProbeSpec, shapes: Sequence[tuple[int, int]]) -> _Measured:
    """Build a random model of ``config`` as a run would load it; meter its passes."""
    model = _load_like_a_run(config, spec)
    trainable = [p for p in model.parameters() if p.requires_grad]
    counts = loading.count_parameters(model)
    weights = storage_bytes(model)  # as loaded, as a GPU holds them
    with torch.no_grad():  # bitsandbytes' CPU kernels repack 4-bit weights on first use
        model(**_batch(config.vocab_size, 1, 4))
    largest = max((p.numel() * p.element_size() for p in model.parameters()), default=0)
    passes = [(b, t, *_peak(model, config.vocab_size, b, t, spec)) for b, t in shapes]
    optimizer_bytes = _optimizer_bytes(model, trainable, config.vocab_size, spec)
    return _Measured(
        weights=weights,
        gradients=sum(p.numel() * p.element_size() for p in trainable),
        optimizer=optimizer_bytes,
        parameters=counts.total,
        trainable=counts.trainable,
        largest_weight=largest,
        passes=passes,
    )


def _load_like_a_run(config: Any, spec: ProbeSpec) -> Any:
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory(prefix="ludwig_nb-probe-") as tmp:
        AutoModelForCausalLM.from_config(config).save_pretrained(tmp)  # type: ignore[no-untyped-call]
        model = loading.load_base(
            Path(tmp),
            spec.config,
            torch.device("cpu"),
            gradient_checkpointing=spec.gradient_checkpointing,
        )
    trainer = spec.config.get("trainer") or {}
    loading.freeze_matching(model, trainer.get("layers_to_freeze_regex"))
    model = loading.wrap_adapter(model, spec.config.get("adapter"), spec.total_steps)
    if spec.gradient_checkpointing:  # reentrant: its recomputation is metered too
        reentrant_checkpointing(model)
    model.train()
    return model


def reentrant_checkpointing(model: Any) -> None:
    """Gradient checkpointing whose recomputation runs through the caller's saved-tensor hooks."""
    options = {"use_reentrant": True}
    if hasattr(model, "activation_checkpointing_enable"):  # its name since transformers 5.x
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)


def _batch(vocab: int, rows: int, tokens: int) -> dict[str, torch.Tensor]:
    """Right-padded rows as a run collates them: the first at ``tokens``, the rest shorter."""
    generator = torch.Generator().manual_seed(rows * 1000 + tokens)
    ids = torch.randint(min(4, vocab - 1), vocab, (rows, tokens), generator=generator)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for r in range(rows):
        n = tokens if r == 0 else max(1, math.ceil(tokens * (0.5 + 0.1 * r)))
        mask[r, :n] = 1
        labels[r, n // 2 : n] = ids[r, n // 2 : n]
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def _autocast(spec: ProbeSpec) -> Any:
    import contextlib

    if spec.mixed_precision:
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _peak(model: Any, vocab: int, rows: int, tokens: int, spec: ProbeSpec) -> tuple[int, int]:
    """(bytes held at the forward pass's end, peak while recomputing) of one pass."""
    batch = _batch(vocab, rows, tokens)
    meter = SavedTensorMeter(model)
    with meter:
        with _autocast(spec):
            loss = model(**batch).loss
        at_forward_end = meter.live
        meter.backward_started()
        loss.backward()
    model.zero_grad(set_to_none=True)
    return at_forward_end, meter.recompute_peak


def _optimizer_bytes(model: Any, trainable: list[Any], vocab: int, spec: ProbeSpec) -> int:
    """Bytes of the optimizer's states after one step (each storage once)."""
    from ludwig_nb.engines.builtin.optim import build_optimizer

    trainer = spec.config.get("trainer") or {}
    if not trainable:
        return 0
    optimizer = build_optimizer(trainable, trainer.get("optimizer") or {}, 1e-4)
    with _autocast(spec):
        loss = model(**_batch(vocab, 1, 8)).loss
    loss.backward()
    optimizer.step()
    seen: dict[int, int] = {}
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, torch.Tensor) and value.numel() > 1:
                storage = value.untyped_storage()
                seen[storage.data_ptr()] = storage.nbytes()
    model.zero_grad(set_to_none=True)
    return sum(seen.values())
