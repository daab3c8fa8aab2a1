"""One trial of a search as the search sees it: its record, and what its run's events tell it.

A trial's record holds its parameters and state, the hyperopt metric's curve and best, and
what the search ETA costs it by (its plan, its steps, its time per step with evaluations and
checkpoints left out).
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

from ludwig_nb.core import events as ev

if TYPE_CHECKING:
    from ludwig_nb.runs.run import Run
    from ludwig_nb.search.eta import TrialShape

__all__ = ["FINISHED", "STATES", "TrialRecord", "note_timing", "trial_end_state"]

STATES = ("queued", "running", "paused", "completed", "pruned", "failed", "stopped")
#: the states a trial ends in
FINISHED = ("completed", "pruned", "failed", "stopped")
#: steps of a trial whose time the search ETA leaves out of its time per step: the first
#: optimizer steps pay one-off costs (torch's compile of the optimizer step, caches)
WARM_STEPS = 5


@dataclasses.dataclass
class TrialRecord:
    """One trial as the search sees it.

    ``metric``: best value of the hyperopt metric so far; ``curve``: (evaluation number, value)
    pairs; times are wall-clock seconds.
    """

    number: int
    params: dict[str, object]
    state: str = "queued"
    metric: float | None = None
    last: float | None = None
    epoch: int = 0
    curve: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    started: float | None = None
    ended: float | None = None
    run_dir: str | None = None
    run: Run | None = None
    error: str | None = None
    search_stopped: bool = False  # ended because the whole search stopped: reruns on resume
    eval_steps: set[int] = dataclasses.field(default_factory=set, repr=False)
    schedule: ev.ScheduleInfo | None = None  # its plan, from RunStarted
    steps: int = 0  # steps trained
    step_s: float | None = None  # its time per step (s), evaluations and checkpoints aside
    trained_at: float | None = None  # when its plan came (RunStarted): setup ends there
    aside_s: float = 0.0  # seconds of its evaluations and checkpoints so far
    last_event: float | None = None  # wall-clock time of its latest step
    #: (steps, time, seconds aside) once its first steps (one-off warm-up) are behind it
    settled: tuple[int, float, float] | None = None
    gpu: tuple[int, float] | None = None  # (GPU index, share of it) when it trains on a GPU

    @property
    def shape(self) -> TrialShape | None:
        """Its batch size, planned steps and evaluations (None before its plan)."""
        from ludwig_nb.search.cost import shape_of

        return shape_of(self.schedule) if self.schedule is not None else None

    @property
    def duration_s(self) -> float | None:
        """Seconds the trial has run so far (until it ended); None before it started."""
        if self.started is None:
            return None
        return (self.ended if self.ended is not None else time.time()) - self.started

    @property
    def counts(self) -> bool:
        """Whether it ended for good (a trial the whole search stopped in reruns)."""
        return self.state in FINISHED and not self.search_stopped


def trial_end_state(run: Run) -> str:
    """A finished trial's state from its run: "completed", "failed", else "stopped"."""
    status = run.status
    if status in ("completed", "failed"):
        return status
    return "stopped"


def note_timing(record: TrialRecord, event: ev.Event) -> None:
    """Update ``record``'s plan, steps, time per step and time aside from one of its events.

    Its time per step leaves out evaluations and checkpoints, and its first
    :data:`WARM_STEPS` steps once there are more (their one-off costs count as the trial's
    overhead).
    """
    if isinstance(event, ev.StepFinished):
        _note_step(record, event)
    elif isinstance(event, ev.RunStarted | ev.ScheduleChanged):
        record.schedule = event.schedule
        if isinstance(event, ev.RunStarted):
            record.trained_at = event.time
    elif isinstance(event, ev.CheckpointSaved | ev.EvaluationFinished):
        record.aside_s += max(0.0, event.time - event.start_time)


def _note_step(record: TrialRecord, event: ev.StepFinished) -> None:
    record.steps = max(record.steps, event.step + 1)
    record.last_event = event.time
    if record.trained_at is None:
        return
    if record.settled is None and record.steps >= WARM_STEPS:
        record.settled = (record.steps, event.time, record.aside_s)
    done, since, aside = record.settled or (0, record.trained_at, 0.0)
    if record.steps > done:
        spent = event.time - since - (record.aside_s - aside)
        record.step_s = max(1e-9, spent / (record.steps - done)) if spent > 0 else None
