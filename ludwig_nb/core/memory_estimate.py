"""A language-model run's GPU memory before it starts: the estimate, the GPUs, the advice.

The LLM engine computes a :class:`MemoryEstimate` (``engines/builtin/llm/footprint.py``);
``ludwig_nb.estimate`` returns it with the time prediction and the dashboard shows it before
the first step. This module holds the result, the table of common GPUs it is checked
against, and how both read (text and HTML); it is pure.

Parts of the total, in bytes: ``weights`` (as stored: 16/32-bit, or bitsandbytes' 4-bit
at about half a byte a parameter plus its quantization constants), ``gradients`` (of the
trainable parameters), ``optimizer`` (its states), ``activations`` (the peak of what the
forward pass saves for the backward pass, at the batch's rows and the data's longest row),
``workspace`` (the backward pass's and the optimizer step's transient buffers) and
``cuda_context`` (the CUDA context and libraries, outside PyTorch's allocator).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping

from ludwig_nb.core.formatting import format_bytes, format_duration

__all__ = ["GPUS", "PARTS", "Advice", "GpuFit", "GpuSpec", "MemoryEstimate", "fits_table"]

_MIB = 1 << 20

#: the parts of an estimate, in the order they are shown
PARTS = ("weights", "gradients", "optimizer", "activations", "workspace", "cuda_context")
_PART_WORDS = {
    "weights": "weights",
    "gradients": "gradients",
    "optimizer": "optimizer states",
    "activations": "activations",
    "workspace": "backward / optimizer workspace",
    "cuda_context": "CUDA context",
}


@dataclasses.dataclass(frozen=True)
class GpuSpec:
    """A GPU model: the memory its driver reports and its peak dense throughput.

    ``total_bytes``: what ``nvidia-smi`` reports as total memory. ``fp32_flops`` /
    ``half_flops``: peak FLOP/s in float32 and in 16-bit on tensor cores, without sparsity
    (NVIDIA's datasheets, as Lightning's ``throughput.py`` tabulates them). ``bf16``: whether
    it computes in bfloat16 (a T4 does not: use float16 there).
    """

    name: str
    total_bytes: int
    fp32_flops: float
    half_flops: float
    bf16: bool = True


#: common GPUs a config is checked against
GPUS: tuple[GpuSpec, ...] = (
    GpuSpec("T4 16 GB", 15360 * _MIB, 8.1e12, 65e12, bf16=False),
    GpuSpec("L4 24 GB", 23034 * _MIB, 30.3e12, 121e12),
    GpuSpec("A10 24 GB", 23028 * _MIB, 31.2e12, 125e12),
    GpuSpec("A100 40 GB", 40960 * _MIB, 19.5e12, 312e12),
    GpuSpec("A100 80 GB", 81920 * _MIB, 19.5e12, 312e12),
    GpuSpec("H100 80 GB", 81559 * _MIB, 67e12, 989e12),
)


@dataclasses.dataclass(frozen=True)
class GpuFit:
    """One GPU against the estimate: ``fits`` when ``total_bytes`` covers it.

    ``headroom_bytes``: what is left (negative: what is missing). ``train_s``: the run's
    training time there, extrapolated (None when it cannot be); ``basis`` says from what.
    """

    name: str
    total_bytes: int
    fits: bool
    headroom_bytes: int
    train_s: float | None = None
    basis: str = ""


@dataclasses.dataclass(frozen=True)
class Advice:
    """A change to the config and the total it would need (bytes).

    ``change``: what to write, as a user writes it (``"quantization: {bits: 4}"``).
    ``fits``: the names of the GPUs (of :data:`GPUS`, and this machine's) it would fit.
    """

    change: str
    total_bytes: int
    fits: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """The GPU memory a training step of the config needs at its peak, and where it goes.

    Attributes:
        parts: bytes per part (keys of :data:`PARTS`).
        model: the base model (hub id or folder).
        parameters / trainable: parameter counts (a 4-bit weight counts its parameters).
        quantization: ``"4-bit"``, ``"8-bit"`` or ``""``; ``dtype``: the weights' dtype.
        batch_size: rows in one forward pass (a micro-batch); ``sequence_length``: the
            longest tokenized row of the training data (tokens, after truncation), which
            some batch will be padded to.
        gradient_checkpointing: whether activations are recomputed in the backward pass.
        device / device_bytes: this machine's GPU and its memory; ``device_bytes`` is
            None without one (``device`` then says so).
        gpus: the common GPUs (:data:`GPUS`) against the total.
        advice: what to change when it does not fit somewhere (empty when it fits all).
        notes: how each part was found (measured, extrapolated, assumed).
    """

    parts: Mapping[str, int]
    model: str
    parameters: int
    trainable: int
    batch_size: int
    sequence_length: int
    quantization: str = ""
    dtype: str = ""
    gradient_checkpointing: bool = False
    device: str = ""
    device_bytes: int | None = None
    gpus: tuple[GpuFit, ...] = ()
    advice: tuple[Advice, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        """The peak, every part together (bytes)."""
        return sum(self.parts.values())

    @property
    def fits_here(self) -> bool | None:
        """Does it fit this machine's GPU? ``None`` without a GPU."""
        if self.device_bytes is None:
            return None
        return self.total_bytes <= self.device_bytes

    def to_dict(self) -> dict[str, object]:
        """A JSON-able dict (what ``status.json`` and the sidebar can carry)."""
        data = dataclasses.asdict(self)
        data["parts"] = dict(self.parts)
        data["total_bytes"] = self.total_bytes
        return data

    def __str__(self) -> str:
        lines = [
            f"GPU memory for {self.model}: ≈ {format_bytes(self.total_bytes)} "
            f"(batch of {self.batch_size} rows x {self.sequence_length} tokens, the longest row)",
            *(
                f"  {_PART_WORDS[name]:32s} {format_bytes(size):>10s}"
                for name, size in self.parts.items()
            ),
            f"  this machine: {self._here()}",
            *(f"  {line}" for line in _fit_lines(self.gpus)),
            *(f"  try {a.change}: ≈ {format_bytes(a.total_bytes)}{_fits(a)}" for a in self.advice),
            *(f"  note: {note}" for note in self.notes),
        ]
        return "\n".join(lines)

    def _here(self) -> str:
        if self.device_bytes is None:
            return self.device or "no GPU"
        verdict = "fits" if self.fits_here else "does NOT fit"
        return f"{self.device} ({format_bytes(self.device_bytes)}): {verdict}"

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            f"<tr><td>{esc(_PART_WORDS[n])}</td><td style='text-align:right'>"
            f"{esc(format_bytes(s))}</td></tr>"
            for n, s in self.parts.items()
        )
        advice = "".join(
            f"<li><code>{esc(a.change)}</code>: ≈ {esc(format_bytes(a.total_bytes))}"
            f"{esc(_fits(a))}</li>"
            for a in self.advice
        )
        notes = "".join(f"<li>{esc(n)}</li>" for n in self.notes)
        return (
            f"<b>GPU memory ≈ {esc(format_bytes(self.total_bytes))}</b> for "
            f"{esc(self.model)} ({self.trainable:,} of {self.parameters:,} parameters train; "
            f"batch of {self.batch_size} x {self.sequence_length} tokens)"
            f"<table>{rows}</table><p>This machine: {esc(self._here())}</p>"
            f"{fits_table(self.gpus)}"
            + (f"<p>To fit:</p><ul>{advice}</ul>" if advice else "")
            + (f"<small><ul>{notes}</ul></small>" if notes else "")
        )


def _fits(advice: Advice) -> str:
    return f" (fits {', '.join(advice.fits)})" if advice.fits else " (fits none of these)"


def _fit_lines(gpus: tuple[GpuFit, ...]) -> list[str]:
    out = []
    for fit in gpus:
        room = format_bytes(abs(fit.headroom_bytes))
        verdict = f"fits, {room} free" if fit.fits else f"does NOT fit, {room} short"
        time = f"; training ≈ {format_duration(fit.train_s)}" if fit.train_s is not None else ""
        out.append(f"{fit.name}: {verdict}{time}")
    return out


def fits_table(gpus: tuple[GpuFit, ...]) -> str:
    """The GPUs as an HTML table: memory, fits or not, and the extrapolated time."""
    if not gpus:
        return ""
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(f.name)}</td><td>{'fits' if f.fits else '<b>does not fit</b>'}</td>"
        f"<td style='text-align:right'>{esc(format_bytes(abs(f.headroom_bytes)))} "
        f"{'free' if f.fits else 'short'}</td>"
        f"<td>{esc(format_duration(f.train_s)) if f.train_s is not None else ''}</td></tr>"
        for f in gpus
    )
    basis = next((f.basis for f in gpus if f.basis), "")
    caption = f"<caption>training time: {esc(basis)}</caption>" if basis else ""
    return (
        f"<table>{caption}<tr><th>GPU</th><th></th><th>memory</th><th>training</th></tr>"
        f"{rows}</table>"
    )
