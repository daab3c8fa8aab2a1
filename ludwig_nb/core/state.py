"""``RunState``: the summary of a run that every view shows, and the pure reducer over events.

``reduce_state(state, event) -> RunState`` never mutates; the UI pump, the recorder's
``status.json`` and the sidebar all show the same fields. Curves (every loss value) are
not kept here: they live in bounded series next to the views that draw them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.progress_text import data_progress_text
from ludwig_nb.core.throttle import describe_throttle

__all__ = ["ACTIVE_STATUSES", "FINAL_STATUSES", "RunState", "reduce_all", "reduce_state"]

FINAL_STATUSES = frozenset({"completed", "stopped", "failed", "interrupted"})
ACTIVE_STATUSES = frozenset(
    {"queued", "preprocessing", "training", "paused", "evaluating", "stopping"}
)


@dataclasses.dataclass(frozen=True)
class RunState:
    """The summary of a run that every view shows, built by :func:`reduce_state`.

    Times are wall-clock seconds; ``step`` counts finished steps and ``epoch`` is 0-based.
    """

    run_id: str = ""
    name: str = ""
    engine: str = ""
    device: str = ""
    status: str = "queued"
    phase_detail: str = ""  # what the phase is doing, e.g. "importing Ludwig"
    step: int = 0  # steps finished
    total_steps: int = 0
    epoch: int = 0  # 0-based epoch of the last step
    epochs: int = 0
    steps_per_epoch: int = 0
    batch_size: int = 0
    started_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    paused_seconds: float = 0.0
    last_loss: float | None = None
    samples_seen: int = 0
    latest_metrics: Mapping[str, object] = dataclasses.field(default_factory=dict)
    best_metrics: Mapping[str, object] = dataclasses.field(default_factory=dict)
    evaluations: int = 0
    checkpoints: int = 0
    alarms: tuple[Mapping[str, object], ...] = ()
    pause_reason: str = ""
    duty: float = 1.0  # fraction of the time the loop trains (1.0: not throttled)
    throttle: str = ""  # "throttled to 70 %: GPU 0 held at 82 °C, target 82 °C"; "" when not
    throttled_s: float = 0.0  # idle seconds the throttle inserted
    micro_batch_size: int = 0  # > 0 once out-of-memory recovery split the batches
    reason: str = ""  # why it ended (stopped/failed)
    error: str = ""
    baseline: Mapping[str, object] = dataclasses.field(default_factory=dict)  # metrics shape
    baseline_predictors: Mapping[str, str] = dataclasses.field(default_factory=dict)
    best_step: int | None = None  # steps done at the best evaluation
    evaluations_since_best: int = 0  # evaluations in a row without improvement
    workers: tuple[Mapping[str, object], ...] = ()  # a distributed run's ranks (WorkersReported)
    #: "GPU 0 throttled 40 % of the last minute (thermal 30 %, power cap 10 %)"; "" when not
    gpu_slowdown: str = ""
    deadline: str = ""  # the latest word on the deadline ("likely finishes 20 min after ...")
    # an LLM run's: its model (ModelDescribed's fields), tokens trained on so far (non-padding
    # and padded), its data's token lengths per split (TokensCounted) and the answers it
    # generated at the last evaluation (SamplesGenerated), with that evaluation's step
    llm: Mapping[str, object] = dataclasses.field(default_factory=dict)
    tokens_seen: int = 0
    padded_tokens_seen: int = 0
    sequence_lengths: Mapping[str, object] = dataclasses.field(default_factory=dict)
    samples: tuple[Mapping[str, str], ...] = ()
    samples_step: int | None = None

    @property
    def progress(self) -> float:
        """Fraction of steps done, in [0, 1]; 1.0 once completed."""
        if self.status == "completed":
            return 1.0
        if self.total_steps <= 0:
            return 0.0
        return min(1.0, self.step / self.total_steps)

    @property
    def is_final(self) -> bool:
        """Whether the run has ended (completed, stopped, failed or interrupted)."""
        return self.status in FINAL_STATUSES

    def to_dict(self) -> dict[str, object]:
        """The state as a JSON-able dict, with ``progress`` added (what ``status.json`` holds)."""
        data = dataclasses.asdict(self)
        data["progress"] = self.progress
        data["alarms"] = [dict(a) for a in self.alarms]
        data["workers"] = [dict(w) for w in self.workers]
        data["samples"] = [dict(s) for s in self.samples]
        return data


def _alarm_key(alarm: Mapping[str, Any]) -> tuple[str, int]:
    return (str(alarm.get("rule", "")), int(alarm.get("device", -1)))


def reduce_state(state: RunState, event: ev.Event) -> RunState:
    """Return the state after ``event`` (a new object; ``state`` is not changed).

    This runs at every step, so the new state is a copy of the old one's fields with the changes
    laid over them, without ``dataclasses.replace`` (which rebuilds every field through
    ``__init__``: a fifth of the run layer's cost per step). ``_changes`` only names fields.
    """
    # a run's duration counts from its first event (queued), preprocessing included
    started = state.started_at if state.started_at is not None else event.time
    new = object.__new__(type(state))
    fields = new.__dict__  # a frozen dataclass forbids setattr, not its own __dict__
    fields.update(state.__dict__)
    fields.update(_changes(state, event))
    fields["updated_at"] = event.time
    fields["started_at"] = started
    return new


def _changes(state: RunState, event: ev.Event) -> dict[str, Any]:
    """The fields ``event`` changes."""
    if isinstance(event, ev.RunStarted):
        sched = event.schedule
        return {
            "run_id": event.run_id,
            "name": event.name,
            "engine": event.engine,
            "device": event.device,
            "status": "training",
            "step": event.start_step,
            "total_steps": sched.total_steps,
            "epochs": sched.epochs,
            "steps_per_epoch": sched.steps_per_epoch,
            "batch_size": sched.batch_size,
        }
    if isinstance(event, ev.ScheduleChanged):
        sched = event.schedule
        return {
            "total_steps": sched.total_steps,
            "epochs": sched.epochs,
            "steps_per_epoch": sched.steps_per_epoch,
            "batch_size": sched.batch_size or state.batch_size,
        }
    if isinstance(event, ev.PhaseChanged):
        if state.is_final:
            return {}
        same = event.phase == state.status
        detail = event.detail or (state.phase_detail if same else "")
        return {"status": event.phase, "phase_detail": detail}
    if isinstance(event, ev.DataProgress):
        if state.is_final or state.status not in ("queued", "preprocessing"):
            return {}
        return {"status": "preprocessing", "phase_detail": data_progress_text(event)}
    if isinstance(event, ev.StepFinished):
        changes = {
            "step": event.step + 1,
            "epoch": event.epoch,
            "last_loss": event.loss,
            "batch_size": event.batch_size,
            "samples_seen": state.samples_seen + event.batch_size,
            "status": "training" if state.status in ("evaluating", "queued") else state.status,
        }
        if event.tokens is not None:
            changes["tokens_seen"] = state.tokens_seen + event.tokens
        if event.padded_tokens is not None:
            changes["padded_tokens_seen"] = state.padded_tokens_seen + event.padded_tokens
        return changes
    if isinstance(event, ev.ModelDescribed | ev.TokensCounted | ev.SamplesGenerated):
        return _llm_changes(event)
    if isinstance(event, ev.EvaluationFinished):
        best = event.improved or not state.best_metrics
        return {
            "latest_metrics": event.metrics,
            "best_metrics": event.metrics if best else state.best_metrics,
            "best_step": event.step + 1 if best else state.best_step,
            "evaluations_since_best": 0 if best else state.evaluations_since_best + 1,
            "evaluations": state.evaluations + 1,
        }
    if isinstance(event, ev.BaselineComputed):
        return {"baseline": event.metrics, "baseline_predictors": event.predictors}
    if isinstance(event, ev.CheckpointSaved):
        return {"checkpoints": state.checkpoints + 1}
    if isinstance(event, ev.Paused):
        return {"status": "paused", "pause_reason": event.reason}
    if isinstance(event, ev.Resumed):
        return {
            "status": "training",
            "pause_reason": "",
            "paused_seconds": state.paused_seconds + max(0.0, event.time - event.paused_at),
        }
    if isinstance(event, ev.AlarmRaised):
        alarm = {
            "rule": event.rule,
            "device": event.device,
            "value": event.value,
            "threshold": event.threshold,
            "action": event.action,
            "message": event.message,
            "time": event.time,
            "margin": event.margin,
            "clear": event.clear,
        }
        kept = tuple(a for a in state.alarms if _alarm_key(a) != _alarm_key(alarm))
        return {"alarms": (*kept, alarm)}
    if isinstance(event, ev.AlarmCleared):
        key = (event.rule, event.device)
        return {"alarms": tuple(a for a in state.alarms if _alarm_key(a) != key)}
    if isinstance(event, ev.Throttled):
        return {
            "duty": event.duty,
            "throttle": describe_throttle(event),
            "throttled_s": max(state.throttled_s, event.idle_s),
        }
    if isinstance(event, ev.WorkersReported):
        return {"workers": event.workers}
    if isinstance(event, ev.GpuSlowdown):
        return {"gpu_slowdown": event.text if event.active else ""}
    if isinstance(event, ev.DeadlineWarning):
        return {"deadline": event.message}
    if isinstance(event, ev.OomRecovered):
        return {"micro_batch_size": event.micro_batch_size}
    if isinstance(event, ev.RunFinished):
        return {
            "duty": 1.0,
            "throttle": "",  # the run no longer trains; throttled_s stays as the record
            "gpu_slowdown": "",
            "status": event.status,
            "step": event.step,
            "reason": event.reason,
            "finished_at": event.time,
            "best_metrics": event.best_metrics or state.best_metrics,
        }
    if isinstance(event, ev.RunFailed):
        return {
            "status": "failed",
            "step": event.step,
            "finished_at": event.time,
            "error": f"{event.error_type}: {event.message}",
            "reason": event.message,
        }
    return {}


def _llm_changes(event: ev.Event) -> dict[str, Any]:
    """What an LLM run's own events change."""
    if isinstance(event, ev.ModelDescribed):
        return {"llm": {k: v for k, v in event.to_dict().items() if k not in ("type", "v")}}
    if isinstance(event, ev.TokensCounted):
        return {"sequence_lengths": {"splits": event.splits, "limit": event.limit}}
    if isinstance(event, ev.SamplesGenerated):
        return {"samples": event.samples, "samples_step": event.step + 1}
    return {}


def reduce_all(events: Iterable[ev.Event], state: RunState | None = None) -> RunState:
    """Fold a sequence of events into a state."""
    current = state if state is not None else RunState()
    for event in events:
        current = reduce_state(current, event)
    return current
