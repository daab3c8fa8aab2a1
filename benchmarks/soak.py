"""A week-long run's footprint: memory held and event log on disk, per step, up to 10M steps.

``python -m benchmarks.soak [--steps 10000000] [--every 1000000] [--evaluate-every 5000]``

A synthetic engine emits steps (with an evaluation and a checkpoint every
``--evaluate-every`` steps) as fast as the run layer takes them, through the real ``Run``:
the ledger (event log, state, ETA, early stopping), the recorder (``events.ndjson``,
``status.json``) and the resource profile. At each milestone it prints the Python heap the
process holds (tracemalloc), the run directory's event files on disk, and the cost of a step,
then the figures against the goals: memory and disk bounded (their growth over the last half
of the run under ``--goal-mb`` each) and the history still readable (every evaluation
through ``compare``, Ludwig's ``training_statistics``-shaped reader and the sidebar's summary).
Memory is the process's resident set (psutil), or the Python heap with ``--tracemalloc``
(exact, but steps cost ~20x more). Run on a quiet machine for the figures; ``--steps 400000
--every 100000`` proves it works in a minute.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import psutil

from ludwig_nb.core import events as ev

_MB = 1e6


class SyntheticEngine:
    """Steps as fast as the run takes them; milestones measured on the run's thread."""

    name = "synthetic"

    def __init__(self, steps: int, every: int, evaluate_every: int, report: Any) -> None:
        self.steps, self.every, self.evaluate_every = steps, every, evaluate_every
        self.report = report

    def fit(self, job: Any, emit: Any, control: Any) -> str:
        clock = 1_000_000.0
        per_epoch = self.evaluate_every * 4
        schedule = ev.ScheduleInfo(
            total_steps=self.steps,
            steps_per_epoch=per_epoch,
            epochs=max(1, self.steps // per_epoch),
            batch_size=32,
        )
        emit(ev.RunStarted(clock, job.run_id, job.name, self.name, "cpu", schedule))
        began = time.perf_counter()
        for step in range(self.steps):
            clock += 0.01
            loss = 1.0 / (1.0 + step * 1e-4)
            emit(ev.StepFinished(clock, step, step // per_epoch, clock - 0.009, 32, loss, 1e-3))
            if (step + 1) % self.evaluate_every == 0:
                metrics = {"validation": {"combined": {"loss": loss}, "y": {"accuracy": 0.5}}}
                emit(ev.EvaluationFinished(clock, step, step // per_epoch, clock - 0.5, metrics))
                emit(ev.CheckpointSaved(clock, step, clock - 0.1, str(job.run_dir), True))
            if (step + 1) % self.every == 0:
                self.report(step + 1, (time.perf_counter() - began) / (step + 1))
        emit(ev.RunFinished(clock, "completed", self.steps))
        return "model"


def _disk(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob("events*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000_000)
    parser.add_argument("--every", type=int, default=1_000_000)
    parser.add_argument("--evaluate-every", type=int, default=5_000)
    parser.add_argument("--goal-mb", type=float, default=100.0)
    parser.add_argument("--tracemalloc", action="store_true", help="the Python heap, exactly")
    args = parser.parse_args(argv)
    process = psutil.Process()

    def memory_mb() -> float:
        if args.tracemalloc:
            return tracemalloc.get_traced_memory()[0] / _MB
        return float(process.memory_info().rss) / _MB

    from ludwig_nb.engines.base import TrainJob
    from ludwig_nb.runs.run import Run

    rows: list[tuple[int, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="ludwig_nb-soak-") as tmp:
        directory = Path(tmp) / "soak-1"
        job = TrainJob(config={}, dataset=None, run_dir=directory, run_id="soak-1", name="soak")

        def report(step: int, step_s: float) -> None:
            held = memory_mb()
            disk = _disk(directory) / _MB
            rows.append((step, held, disk, step_s))
            print(
                f"{step:>11,} steps  memory {held:8.1f} MB  events on disk {disk:8.1f} MB  "
                f"{step_s * 1e6:6.1f} us/step",
                flush=True,
            )

        engine = SyntheticEngine(args.steps, args.every, args.evaluate_every, report)
        if args.tracemalloc:
            tracemalloc.start()
        gc.collect()
        base = memory_mb()
        run = Run(run_id="soak-1", name="soak", directory=directory, engine=engine, job=job)
        run.start()
        run.wait()
        assert run.status == "completed", run.traceback_text
        _summary(rows, base, args.goal_mb)
        _readable(run, args.steps // args.evaluate_every)
    return 0


def _readable(run: Any, evaluations: int) -> None:
    """The history through what reads it: compare, the search's statistics, the sidebar."""
    from ludwig_nb.runs.compare import compare
    from ludwig_nb.search.statistics import run_statistics
    from ludwig_nb.server.runs_view import run_summary

    began = time.perf_counter()
    record = compare(run.directory, run.directory).records[0]
    curve = record.curves[("validation", "combined", "loss")]
    training, _ = run_statistics(str(run.directory))
    entry = {"run_id": run.id, "directory": str(run.directory), "pid": 0}
    summary = run_summary(entry, pid_alive=lambda pid: False)
    read_s = time.perf_counter() - began
    whole = len(curve.value) == evaluations == len(training["validation"]["combined"]["loss"])
    print(
        f"history readable: {len(curve.value):,} of {evaluations:,} evaluations in compare and "
        f"the statistics, the sidebar's step {summary['step']:,} "
        f"({'all there' if whole else 'MISSING SOME'}; read in {read_s:.2f} s)"
    )
    kept, trained = len(run.steps), run.steps_trained[0]
    print(f"steps kept in the record: {kept:,} of {trained:,} ({kept / trained:.2%})")


def _summary(rows: list[tuple[int, float, float, float]], base: float, goal: float) -> None:
    if len(rows) < 2:
        return
    half = rows[len(rows) // 2]
    last = rows[-1]
    grew_heap = last[1] - half[1]
    grew_disk = last[2] - half[2]
    print(
        f"memory at the start {base:.1f} MB; over the last half ({half[0]:,} -> {last[0]:,} steps):"
    )
    print(f"  memory grew {grew_heap:+.1f} MB (goal under {goal:g} MB): {grew_heap / goal:.2f}x")
    print(
        f"  event files grew {grew_disk:+.1f} MB (goal under {goal:g} MB): {grew_disk / goal:.2f}x"
    )


if __name__ == "__main__":
    sys.exit(main())
