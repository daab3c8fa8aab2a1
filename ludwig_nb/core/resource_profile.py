"""A run's resource profile as plain data: phase timeline, per-sample tags and the summary.

Pure functions over events and sample dicts (no clock, no driver), so the recorder in
``runs/profile.py``, the comparer and the tests share one definition of every figure.

A *sample* is a dict ``{"time", "phase", "step", "host": {...}, "gpus": [{...}]}`` (GPU
fields as in ``GpuSample.to_dict``, plus ``torch_allocated``/``torch_reserved``/
``torch_peak_allocated`` where the engine's device reports them). Units everywhere: bytes,
seconds, joules, watts, °C, % (0..100).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.throttle_time import (
    CAUSES,
    ThrottleTime,
    describe_throttle_time,
    throttle_time,
    worst_gpu,
)

__all__ = [
    "PHASES",
    "UNITS",
    "Interval",
    "ludwig_keys",
    "phase_at",
    "phase_timeline",
    "summarize",
]

#: the phases a sample can carry (run statuses, plus ``checkpoint`` for the time a
#: checkpoint was being written)
PHASES = ("queued", "preprocessing", "training", "evaluation", "checkpoint", "paused", "other")

UNITS = {
    "memory": "bytes",
    "time": "seconds (total_execution_time: microseconds, as LudwigProfiler)",
    "energy": "joules",
    "power": "watts",
    "temperature": "celsius",
    "utilization": "percent (0..100)",
}

_STATUS_PHASE = {"evaluating": "evaluation", "stopping": "training"}
_FINAL = {"completed", "stopped", "failed"}

Interval = tuple[float, float, str]  # (start, end, phase), wall-clock seconds


def phase_timeline(events: Iterable[ev.Event], end: float | None = None) -> list[Interval]:
    """Non-overlapping ``(start, end, phase)`` intervals from a run's events, in order.

    Phase changes give the base timeline; evaluations and checkpoints (their own start and
    end times) are cut into it, checkpoints last, so a sample taken while a checkpoint was
    written is tagged ``checkpoint`` even inside an evaluation. ``end``: closes the last
    open phase (default: the last event's time).
    """
    base: list[Interval] = []
    cuts: list[Interval] = []
    current: tuple[float, str] | None = None
    last = -math.inf
    for event in events:
        last = max(last, event.time)
        if isinstance(event, ev.PhaseChanged):
            phase = _STATUS_PHASE.get(event.phase, event.phase)
            if current is not None:
                base.append((current[0], event.time, current[1]))
            current = (event.time, phase)
        elif isinstance(event, ev.EvaluationFinished):
            cuts.append((event.start_time, event.time, "evaluation"))
        elif isinstance(event, ev.CheckpointSaved):
            cuts.append((event.start_time, event.time, "checkpoint"))
        elif isinstance(event, ev.Paused):
            if current is not None:
                base.append((current[0], event.time, current[1]))
            current = (event.time, "paused")
        elif isinstance(event, (ev.Resumed, ev.RunFinished, ev.RunFailed)):
            if current is not None:
                base.append((current[0], event.time, current[1]))
            resumed = isinstance(event, ev.Resumed)
            current = (event.time, _resumed_phase(base)) if resumed else None
    if current is not None:
        base.append((current[0], last if end is None else end, current[1]))
    timeline = [i for i in base if i[1] > i[0]]
    for cut in sorted(cuts, key=lambda c: c[2] == "checkpoint"):
        timeline = _cut(timeline, cut)
    return timeline


def _resumed_phase(base: Sequence[Interval]) -> str:
    for _, _, phase in reversed(base):
        if phase != "paused":
            return phase
    return "training"


def _cut(timeline: list[Interval], cut: Interval) -> list[Interval]:
    start, end, phase = cut
    if end <= start:
        return timeline
    out: list[Interval] = []
    for a, b, p in timeline:
        if b <= start or a >= end:
            out.append((a, b, p))
            continue
        if a < start:
            out.append((a, start, p))
        if b > end:
            out.append((end, b, p))
    out.append((start, end, phase))
    return sorted(out)


def phase_at(timeline: Sequence[Interval], t: float) -> str:
    """The phase at wall time ``t`` ("other" outside every interval)."""
    for start, end, phase in timeline:
        if start <= t < end:
            return phase
    if timeline and t >= timeline[-1][1] and t - timeline[-1][1] < 1e-6:
        return timeline[-1][2]
    return "other"


# -- the summary -------------------------------------------------------------------------
def summarize(
    samples: Sequence[Mapping[str, object]],
    timeline: Sequence[Interval],
    steps: Sequence[tuple[float, float, int]],
    interval: float,
) -> dict[str, object]:
    """The run's summary figures.

    ``steps``: ``(start_time, end_time, batch_size)`` per training step. ``interval``: the
    sampler's period (s). Returns per-phase seconds, steps/s and samples/s over training
    time, and per GPU: peak memory (bytes), energy (J, from the energy counter when the driver
    has one, else the integral of power), J per training sample, peak temperature (°C), the
    smallest thermal margin (°C), and the time lost to throttling: ``throttle`` per cause
    (``core/throttle_time.py``: the driver's counters, else the sampled reasons), with
    ``throttled_power_s`` / ``throttled_thermal_s`` its power-cap and thermal seconds. The
    run's ``throttle`` is its most throttled GPU's (the slowest GPU paces a parallel run).
    """
    phase_s: dict[str, float] = {}
    for start, end, phase in timeline:
        phase_s[phase] = phase_s.get(phase, 0.0) + (end - start)
    training_s = phase_s.get("training", 0.0)
    trained = sum(size for _, _, size in steps)
    summary: dict[str, Any] = {
        "total_s": (timeline[-1][1] - timeline[0][0]) if timeline else 0.0,
        "phase_s": phase_s,
        "steps": len(steps),
        "samples_trained": trained,
        "steps_per_s": len(steps) / training_s if training_s > 0 else None,
        "samples_per_s": trained / training_s if training_s > 0 else None,
        "sample_count": len(samples),
        "interval_s": interval,
    }
    summary["host"] = _host_summary(samples)
    gpus = _gpu_series(samples)
    summary["gpus"] = {str(k): _gpu_summary(v, trained) for k, v in gpus.items()}
    summary.update(_totals(summary["gpus"], trained))
    return summary


def _host_summary(samples: Sequence[Mapping[str, Any]]) -> dict[str, object]:
    host = [s["host"] for s in samples if s.get("host")]
    return {
        "peak_rss": _max(h.get("process_rss") for h in host),
        "mean_process_cpu_percent": _mean(h.get("process_cpu_percent") for h in host),
        "peak_process_cpu_percent": _max(h.get("process_cpu_percent") for h in host),
        "peak_memory_used": _max(h.get("memory_used") for h in host),
        "min_memory_available": _min(
            h["memory_total"] - h["memory_used"]
            for h in host
            if h.get("memory_total") is not None and h.get("memory_used") is not None
        ),
        "mean_cpu_percent": _mean(h.get("cpu_percent") for h in host),
        "memory_total": _max(h.get("memory_total") for h in host),
    }


def _gpu_series(samples: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, object]]]:
    out: dict[str, list[Mapping[str, object]]] = {}
    for sample in samples:
        for gpu in sample.get("gpus") or ():
            key = str(gpu.get("index"))
            if gpu.get("mig_index") is not None:
                key = f"{key}.mig{gpu['mig_index']}"
            out.setdefault(key, []).append({**gpu, "_time": sample.get("time", gpu.get("time"))})
    return out


def _gpu_summary(series: Sequence[Mapping[str, Any]], trained: int) -> dict[str, object]:
    energy, source = _energy(series)
    first = series[0]
    return {
        "name": first.get("name"),
        "memory_total": first.get("memory_total"),
        "peak_memory_used": _max(g.get("memory_used") for g in series),
        "mean_memory_used": _mean(g.get("memory_used") for g in series),
        "peak_process_memory": _max(g.get("process_memory") for g in series),
        "peak_torch_allocated": _max(
            g.get("torch_peak_allocated") or g.get("torch_allocated") for g in series
        ),
        "peak_torch_reserved": _max(g.get("torch_reserved") for g in series),
        "mean_utilization": _mean(g.get("utilization_gpu") for g in series),
        "mean_sm_activity": _mean(g.get("sm_activity") for g in series),
        "mean_memory_bandwidth": _mean(g.get("memory_bandwidth") for g in series),
        "mean_power_w": _mean(g.get("power_draw") for g in series),
        "peak_power_w": _max(g.get("power_draw") for g in series),
        "energy_j": energy,
        "energy_source": source,
        "j_per_sample": energy / trained if energy is not None and trained else None,
        "peak_temperature": _max(g.get("temperature") for g in series),
        "min_slowdown_margin": _min(_margin(g) for g in series),
        **_throttle_figures(series),
        "peak_clock_sm": _max(g.get("clock_sm") for g in series),
        "min_clock_sm": _min(g.get("clock_sm") for g in series),
    }


def _energy(series: Sequence[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    counter = [g["energy_consumed"] for g in series if g.get("energy_consumed") is not None]
    if len(counter) >= 2:
        return max(0.0, counter[-1] - counter[0]), "counter"
    power = [(g["_time"], g["power_draw"]) for g in series if g.get("power_draw") is not None]
    if len(power) >= 2:
        joules = sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in itertools.pairwise(power))
        return joules, "power_integral"
    return None, None


def _margin(gpu: Mapping[str, Any]) -> float | None:
    """°C of thermal margin: the sample's own, else its slowdown threshold's distance."""
    if gpu.get("temperature_margin") is not None:
        return float(gpu["temperature_margin"])
    if gpu.get("temperature_slowdown") is None or gpu.get("temperature") is None:
        return None
    return float(gpu["temperature_slowdown"]) - float(gpu["temperature"])


def throttle_block(figures: ThrottleTime | None, gpu: str | None = None) -> dict[str, object]:
    """The summary's ``throttle``: seconds and percent per cause, the source, the words."""
    if figures is None:
        return {}
    share = figures.share or 0.0
    return {
        **figures.to_dict(),
        "percent": 100.0 * share,
        "causes_percent": {c: 100.0 * (figures.cause_share(c) or 0.0) for c in CAUSES},
        "gpu": gpu,
        "text": describe_throttle_time(figures, gpu=None if gpu is None else f"GPU {gpu}"),
    }


def _throttle_figures(series: Sequence[Mapping[str, Any]]) -> dict[str, object]:
    figures = throttle_time((float(g["_time"]), g) for g in series if g.get("_time") is not None)
    block = throttle_block(figures)
    causes: Mapping[str, float] = {} if figures is None else figures.causes
    return {
        "throttle": block,
        "throttled_power_s": causes.get("power_cap"),
        "throttled_thermal_s": causes.get("thermal"),
    }


def _totals(gpus: Mapping[str, Mapping[str, Any]], trained: int) -> dict[str, object]:
    energies = [g["energy_j"] for g in gpus.values() if g.get("energy_j") is not None]
    energy = sum(energies) if energies else None
    return {
        "energy_j": energy,
        "j_per_sample": energy / trained if energy is not None and trained else None,
        "peak_gpu_memory": _max(g.get("peak_memory_used") for g in gpus.values()),
        "peak_temperature": _max(g.get("peak_temperature") for g in gpus.values()),
        "throttled_power_s": _sum(g.get("throttled_power_s") for g in gpus.values()),
        "throttled_thermal_s": _sum(g.get("throttled_thermal_s") for g in gpus.values()),
        "throttle": _run_throttle(gpus),
    }


def _run_throttle(gpus: Mapping[str, Mapping[str, Any]]) -> dict[str, object]:
    """The most throttled GPU's block, named when the run had several."""
    figures = {
        key: ThrottleTime.from_dict(g["throttle"]) if g.get("throttle") else None
        for key, g in gpus.items()
        if "." not in key  # a MIG slice is its parent GPU's clocks
    }
    worst = worst_gpu(figures)
    if worst is None:
        return {}
    key, slowest = worst
    return throttle_block(slowest, key if len(figures) > 1 else None)


# -- LudwigProfiler's keys ---------------------------------------------------------------
def ludwig_keys(
    samples: Sequence[Mapping[str, Any]], tag: str, seconds: float, static: Mapping[str, object]
) -> dict[str, object]:
    """LudwigProfiler's flat ``SystemResourceMetrics`` for one phase's samples.

    For one phase (or the whole run), with its units: ``total_execution_time`` in µs, memory in
    bytes; but ``cuda_<i>_*_memory_used`` in bytes too (Ludwig wrote gpustat's MB there).
    """
    host = [s["host"] for s in samples if s.get("host")]
    out: dict[str, object] = {
        "code_block_tag": tag,
        **{k: static.get(k) for k in ("cpu_name", "cpu_architecture", "num_cpu")},
        "total_cpu_memory_size": static.get("total_cpu_memory_size"),
        "ludwig_version": static.get("ludwig_version"),
        "total_execution_time": seconds * 1e6,
        "max_cpu_utilization": _max(h.get("process_cpu_percent") for h in host),
        "average_cpu_utilization": _mean(h.get("process_cpu_percent") for h in host),
        "max_cpu_memory_usage": _max(h.get("process_rss") for h in host),
        "average_cpu_memory_usage": _mean(h.get("process_rss") for h in host),
        "min_global_cpu_memory_available": _min(_available(h) for h in host),
        "average_global_cpu_memory_available": _mean(_available(h) for h in host),
        "max_global_cpu_utilization": _max(h.get("cpu_percent") for h in host),
        "average_global_cpu_utilization": _mean(h.get("cpu_percent") for h in host),
    }
    for key, series in _gpu_series(samples).items():
        if "." in key:
            continue
        used = [g.get("memory_used") for g in series]
        out[f"cuda_{key}_max_memory_used"] = _max(used)
        out[f"cuda_{key}_average_memory_used"] = _mean(used)
    return out


def _available(host: Mapping[str, Any]) -> float | None:
    if host.get("memory_total") is None or host.get("memory_used") is None:
        return None
    return float(host["memory_total"] - host["memory_used"])


# -- small reductions that skip None -------------------------------------------------------
def _clean(values: Iterable[Any]) -> list[float]:
    return [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def _max(values: Iterable[object]) -> object:
    found = _clean(values)
    return max(found) if found else None


def _min(values: Iterable[object]) -> object:
    found = _clean(values)
    return min(found) if found else None


def _mean(values: Iterable[object]) -> float | None:
    found = _clean(values)
    return sum(found) / len(found) if found else None


def _sum(values: Iterable[object]) -> float | None:
    found = _clean(values)
    return sum(found) if found else None
