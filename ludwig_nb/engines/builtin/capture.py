"""An opt-in torch.profiler capture of a few training steps, never the whole run.

``StepCapture(run_dir, steps=N, device)`` starts ``torch.profiler.profile`` with a
schedule (skip ``wait`` steps, warm up for ``warmup``, record ``N``), is told about every
finished step, and when the window closes writes into the run directory:

* ``torch_trace.json``: a Chrome / Perfetto trace (open it in ui.perfetto.dev or
  chrome://tracing);
* ``torch_top_ops.json``: the top operators by self time (``key_averages()``, public API
  only), ``[{"name", "calls", "self_cpu_s", "cpu_total_s", "self_device_s"}]``, seconds;
* ``torch_top_ops.txt``: torch's own table of the same.

It runs on the training thread (the profiler records the thread that started it).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import torch

__all__ = ["TOP_OPS_FILE", "TRACE_FILE", "StepCapture"]

log = logging.getLogger(__name__)

TRACE_FILE = "torch_trace.json"
TOP_OPS_FILE = "torch_top_ops.json"
TOP_OPS_TABLE = "torch_top_ops.txt"
_TOP = 25


class StepCapture:
    """Profiles ``steps`` training steps after ``wait`` + ``warmup`` steps.

    ``steps`` <= 0: does nothing. Raises ``ValueError`` for a negative wait or warmup.

    Args:
        run_dir: The run directory; the capture is written there as ``torch_top_ops.json``.
        steps: How many training steps to record.
        device: The training device (CUDA activity is recorded on a GPU).
        wait: Steps skipped before the warm-up.
        warmup: Steps profiled but not recorded.
    """

    def __init__(
        self, run_dir: Path, steps: int, device: Any, *, wait: int = 2, warmup: int = 2
    ) -> None:
        if wait < 0 or warmup < 0:
            raise ValueError("wait and warmup must be >= 0 steps")
        self.run_dir = Path(run_dir)
        self.steps = max(0, int(steps))
        self._wait, self._warmup = wait, warmup
        self._device = torch.device(device)
        self._profiler: Any = None
        self._seen = 0
        self.written = False

    @property
    def active(self) -> bool:
        """Whether the profiler is recording."""
        return self._profiler is not None

    def start(self) -> None:
        """Start the torch profiler (CPU, and CUDA on a GPU) unless nothing is to be captured."""
        if self.steps <= 0 or self._profiler is not None or self.written:
            return
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self._device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        schedule = torch.profiler.schedule(
            wait=self._wait, warmup=self._warmup, active=self.steps, repeat=1
        )
        self._profiler = torch.profiler.profile(
            activities=activities,
            schedule=schedule,
            on_trace_ready=self._ready,
            record_shapes=False,
            profile_memory=True,
        )
        self._profiler.__enter__()

    def step_finished(self) -> None:
        """Call after every training step; closes the profiler once the window is done."""
        if self._profiler is None:
            return
        self._profiler.step()
        self._seen += 1
        if self._seen >= self._wait + self._warmup + self.steps:
            self.close()

    def close(self) -> None:
        """Stop the profiler (at the window's end, or a run shorter than the window)."""
        profiler, self._profiler = self._profiler, None
        if profiler is not None:
            profiler.__exit__(None, None, None)

    def _ready(self, profiler: Any) -> None:
        try:
            profiler.export_chrome_trace(str(self.run_dir / TRACE_FILE))
            averages = profiler.key_averages()
            sort = "self_cuda_time_total" if self._device.type == "cuda" else "self_cpu_time_total"
            (self.run_dir / TOP_OPS_TABLE).write_text(
                averages.table(sort_by=sort, row_limit=_TOP), encoding="utf-8"
            )
            rows = [_op_row(a) for a in averages]
            rows.sort(key=lambda r: r["self_device_s"] or r["self_cpu_s"], reverse=True)
            (self.run_dir / TOP_OPS_FILE).write_text(
                json.dumps({"steps": self.steps, "device": str(self._device), "ops": rows[:_TOP]}),
                encoding="utf-8",
            )
            self.written = True
        except Exception:  # a profiler failure must not fail the training run
            log.exception("ludwig_nb: writing the torch.profiler capture failed")


def _op_row(average: Any) -> dict[str, Any]:
    device_us = getattr(average, "self_device_time_total", None)
    if device_us is None:
        device_us = getattr(average, "self_cuda_time_total", 0.0)
    return {
        "name": str(average.key),
        "calls": int(average.count),
        "self_cpu_s": float(average.self_cpu_time_total) / 1e6,
        "cpu_total_s": float(average.cpu_time_total) / 1e6,
        "self_device_s": float(device_us or 0.0) / 1e6,
    }
