"""Recorded traces: a run's ``events.ndjson`` (core/events.py format) is a trace.

``load_trace(path)`` reads one file; ``load_traces(folder)`` every ``*.ndjson`` in a
folder. Regime changes are taken from ``ScheduleChanged`` events whose batch size differs
(other changes in a real run are unknown, so they are not scored as post-change).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.eta.scenarios import Trace
from ludwig_nb.core import events as ev

__all__ = ["LOADED_DIR", "TRACES_DIR", "load_trace", "load_traces"]

TRACES_DIR = Path(__file__).with_name("traces")
#: traces recorded while the machine ran other jobs (load average 4-7 on 2 cores): their
#: step times are dominated by external load bursts; reported apart as a stress test.
LOADED_DIR = TRACES_DIR / "loaded"


def load_trace(path: str | Path) -> Trace:
    """Read ``events.ndjson`` into a :class:`Trace`. Raises ``ValueError`` naming the file
    and line when a line is not an event, or when the run has no RunStarted / no step."""
    path = Path(path)
    events: list[ev.Event] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(ev.event_from_json(line))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not an event ({exc})") from None
    if not any(isinstance(e, ev.RunStarted) for e in events):
        raise ValueError(f"{path}: no run_started event")
    if not any(isinstance(e, ev.StepFinished) for e in events):
        raise ValueError(f"{path}: no step_finished event")
    events = _trim(events)
    changes: list[int] = []
    batch = next(e.schedule.batch_size for e in events if isinstance(e, ev.RunStarted))
    last_step = -1
    for e in events:
        if isinstance(e, ev.StepFinished):
            last_step = e.step
        elif isinstance(e, ev.ScheduleChanged) and e.schedule.batch_size not in (0, batch):
            batch = e.schedule.batch_size
            changes.append(last_step + 1)
    return Trace(name=path.stem, events=tuple(events), changes=tuple(changes))


def _trim(events: list[ev.Event]) -> list[ev.Event]:
    """From the first RunStarted to the run's last step, evaluation or checkpoint."""
    first = next(i for i, e in enumerate(events) if isinstance(e, ev.RunStarted))
    kept = events[first:]
    last = max(
        i
        for i, e in enumerate(kept)
        if isinstance(e, ev.StepFinished | ev.EvaluationFinished | ev.CheckpointSaved)
    )
    return kept[: last + 1]


def load_traces(folder: str | Path = TRACES_DIR) -> list[Trace]:
    """Every ``*.ndjson`` trace in ``folder``, sorted by name (none if it does not exist)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return [load_trace(p) for p in sorted(folder.glob("*.ndjson"))]
