"""Every run's resource profile: ``system_resource_usage.json`` in its run directory.

:class:`ResourceProfile` subscribes to the sampler the run already has (``runs/monitoring``:
the kernel sampler, or the simulated GPU's) and keeps one row per tick, tagged with the
run's phase and step; no second sampler, no NVML call of its own, nothing on the training
thread. The torch allocator figures (allocated / reserved / peak bytes) are read on the
sampler thread when the run trains on a CUDA device. When the run ends the file holds the
static facts, the summary (``core.resource_profile.summarize``), LudwigProfiler's keys per
phase and every sample.

``load_profile(path)`` reads ours; ``import_ludwig_profile(dir)`` reads what LudwigProfiler
wrote (``system_resource_usage/<tag>/run_*.json``) into the same shape, with its GPU
memory converted from gpustat's MiB to bytes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import platform
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from ludwig_nb.core import events as ev
from ludwig_nb.core import resource_profile as rp
from ludwig_nb.core.gpu_sample import GpuSample, Snapshot
from ludwig_nb.engines.devices import NO_DEVICE_FACTS, DeviceFacts
from ludwig_nb.runs.handle import RunHandle
from ludwig_nb.runs.profile_files import (
    PROFILE_FILE,
    PROFILE_VERSION,
    import_ludwig_profile,
    load_profile,
    profile_frame,
)
from ludwig_nb.store.rundir import write_atomic

__all__ = [
    "PROFILE_FILE",
    "PROFILE_VERSION",
    "ProfiledRun",
    "ResourceProfile",
    "import_ludwig_profile",
    "load_profile",
    "profile_frame",
    "static_facts",
]

log = logging.getLogger(__name__)

_STATUS_PHASE = {"evaluating": "evaluation", "stopping": "training"}
_GPU_FIELDS = tuple(field.name for field in dataclasses.fields(GpuSample))
_LUDWIG_TAGS = {
    "preprocessing": "preprocessing",
    "training": "training",
    "evaluation": "evaluation",
}


class ProfiledRun(RunHandle, Protocol):
    """What a profile reads of its run (a :class:`~ludwig_nb.runs.run.Run`): handle and events."""

    @property
    def events(self) -> Sequence[ev.Event]:
        """The run's events so far (its phases and steps)."""

    @property
    def steps_trained(self) -> tuple[int, int]:
        """``(steps, samples)`` trained: every step, its record kept or thinned out."""


class ResourceProfile:
    """Collects a run's samples from ``sampler`` (None: phases and steps only).

    ``devices``: the facts of the run's engine (``Engine.devices()``): its framework
    allocator's bytes on the run's GPU beside NVML's, and its version.

    It keeps the sampler's own immutable snapshots (no copy per tick) and builds the rows
    when read. Past ``max_samples`` (6 h at 1 Hz) it keeps every other sample and from then
    on every second tick, and so on: memory stays bounded, the energy and throttle counters
    stay exact (first and last samples are kept), peaks may miss a dropped tick.
    """

    def __init__(
        self,
        run: ProfiledRun,
        sampler: Any,
        max_samples: int = 21_600,
        devices: DeviceFacts = NO_DEVICE_FACTS,
    ) -> None:
        self._run = run
        self._sampler = sampler
        self._devices = devices  # the run's engine's: its allocator's bytes, its version
        self._lock = threading.Lock()
        self._samples: list[tuple[str, int, Snapshot, dict[str, int]]] = []
        self._max = max(2, max_samples)
        self._stride = 1  # keep one tick in this many
        self._ticks = 0
        self._latest: tuple[str, int, Snapshot, dict[str, int]] | None = None
        self._unsubscribe: Any = None

    @property
    def interval(self) -> float:
        """Seconds between the kept samples (the sampler's period times the stride)."""
        return float(getattr(self._sampler, "interval", 1.0) or 1.0) * self._stride

    @property
    def dropped(self) -> int:
        """Ticks not kept because the run outgrew ``max_samples``."""
        if self._stride == 1:
            return 0
        latest_apart = self._latest is not None and self._samples[-1] is not self._latest
        return self._ticks - len(self._samples) - int(latest_apart)

    def start(self) -> ResourceProfile:
        """Subscribe to the sampler's snapshots (none without a sampler); returns this profile."""
        if self._sampler is not None:
            self._unsubscribe = self._sampler.subscribe(self._on_snapshot)
        return self

    def stop(self) -> None:
        """Unsubscribe from the sampler (idempotent)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def close(self) -> None:
        """Stop; a run that ended before the sampler's first tick gets one reading now.

        A run shorter than the sampler's period (or one that ran while a busy machine
        delayed the tick) would otherwise have no sample, so no peak RSS or memory figure:
        ``compare`` showed "–" beside a run that had one. The reading is the host's only
        (its source has a lock of its own): GPU counters are read on the sampler's thread
        alone, and a sub-second run has no GPU figure worth a second reader.
        """
        self.stop()
        with self._lock:
            empty = self._latest is None
        host = getattr(self._sampler, "host_source", None)
        if not empty or host is None:
            return
        sample = host.sample()
        row: tuple[str, int, Snapshot, dict[str, int]] = (
            "other",
            self._run.state.step,
            Snapshot(time=sample.time, host=sample),
            {},
        )
        with self._lock:
            if self._latest is None:
                self._ticks += 1
                self._latest = row
                self._samples.append(row)

    def _on_snapshot(self, snapshot: Snapshot) -> None:
        """On the sampler thread, once a tick.

        A reference to the snapshot, its phase and step, and (on CUDA) the allocator's bytes.
        Nothing happens per training step.
        """
        state = self._run.state
        if state.is_final:
            return
        torch_memory = (
            {}
            if self._run.device_index is None
            else self._devices.allocator_memory(self._run.device_index)
        )
        row = (_STATUS_PHASE.get(state.status, state.status), state.step, snapshot, torch_memory)
        with self._lock:
            self._ticks += 1
            self._latest = row  # kept apart, so the counters' last value is never dropped
            if (self._ticks - 1) % self._stride:
                return
            if len(self._samples) >= self._max:
                self._samples = self._samples[::2]
                self._stride *= 2
            self._samples.append(row)

    def _row(
        self, phase: str, step: int, snapshot: Snapshot, torch: dict[str, int]
    ) -> dict[str, Any]:
        gpus = []
        for gpu in snapshot.gpus:
            # not dataclasses.asdict: it deep-copies, 5x the cost of reading the fields
            out: dict[str, object] = {name: getattr(gpu, name) for name in _GPU_FIELDS}
            out["clock_reasons"] = list(gpu.clock_reasons)
            if gpu.mig_index is None and gpu.index == self._run.device_index:
                out.update(torch)
            gpus.append(out)
        host = None if snapshot.host is None else vars(snapshot.host).copy()
        return {"time": snapshot.time, "phase": phase, "step": step, "host": host, "gpus": gpus}

    # -- results -----------------------------------------------------------------------
    def samples(self) -> list[dict[str, object]]:
        """Every kept sample, tagged from the event timeline (checkpoints included)."""
        timeline = rp.phase_timeline(self._run.events)
        with self._lock:
            kept = list(self._samples)
            if self._latest is not None and (not kept or kept[-1] is not self._latest):
                kept.append(self._latest)
        rows = [self._row(*sample) for sample in kept]
        for row in rows:
            tagged = rp.phase_at(timeline, row["time"])
            if tagged != "other":
                row["phase"] = tagged
        return rows

    def to_dict(self) -> dict[str, object]:
        """The whole profile (what ``system_resource_usage.json`` holds)."""
        events = self._run.events
        timeline = rp.phase_timeline(events)
        samples = self.samples()
        steps = [
            (e.start_time, e.time, e.batch_size) for e in events if isinstance(e, ev.StepFinished)
        ]
        counted, trained = self._run.steps_trained  # the record thins a long run's steps
        static = static_facts(self._devices)
        per_phase = {
            tag: rp.ludwig_keys(
                [s for s in samples if s["phase"] == phase],
                tag,
                sum(b - a for a, b, p in timeline if p == phase),
                static,
            )
            for phase, tag in _LUDWIG_TAGS.items()
        }
        total = sum(b - a for a, b, _ in timeline)
        return {
            "version": PROFILE_VERSION,
            "source": "ludwig_nb",
            "run_id": self._run.id,
            "units": rp.UNITS,
            **rp.ludwig_keys(samples, "run", total, static),
            "static": static,
            "summary": rp.summarize(
                samples, timeline, steps, self.interval, counted=(counted, trained)
            ),
            "phases": per_phase,
            "timeline": [list(i) for i in timeline],
            "dropped_samples": self.dropped,
            "samples": samples,
        }

    def write(self) -> Path:
        """Write ``system_resource_usage.json`` into the run directory; returns its path.

        Serialised in one ``json.dumps`` (the C encoder: ``json.dump`` to a file takes the
        pure-Python path, 4x slower for an hour of 8-GPU samples), then replaced atomically.
        """
        path = self._run.directory / PROFILE_FILE
        text = json.dumps(self.to_dict(), default=str).encode("utf-8")
        return write_atomic(path, lambda handle: handle.write(text))


def static_facts(devices: DeviceFacts = NO_DEVICE_FACTS) -> dict[str, object]:
    """What LudwigProfiler records once: CPU, cores, RAM (bytes), versions.

    Args:
        devices: the run's engine's device facts (its framework's version, once loaded).
    """
    facts: dict[str, object] = {
        "cpu_name": platform.processor() or platform.machine(),
        "cpu_architecture": platform.machine().upper(),
        "num_cpu": os.cpu_count(),
        "python_version": platform.python_version(),
        "ludwig_version": None,
    }
    try:
        import psutil

        facts["total_cpu_memory_size"] = int(psutil.virtual_memory().total)
    except Exception:
        facts["total_cpu_memory_size"] = None
    facts.update(devices.versions())
    return facts
