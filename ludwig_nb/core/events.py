"""The typed events of a training run: the one stream every view reads.

Events are frozen dataclasses, JSON-serialisable, tagged with ``type`` and versioned with
``v``. The worker thread creates them; the recorder writes them to ``events.ndjson``; the
UI pump, the ETA estimator and the sidebar read them. ``labextension/src/types.ts``
mirrors these shapes for the sidebar.

All times are seconds on the wall clock (``time.time()``), so that another process (the
Jupyter server) can read them. Durations are derived from start/end pairs.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ludwig_nb.core import strict_json

__all__ = [
    "ALARM_PAUSE_PREFIX",
    "EVENT_TYPES",
    "EVENT_VERSION",
    "PAUSE_SOURCES",
    "AlarmCleared",
    "AlarmRaised",
    "BaselineComputed",
    "CheckpointSaved",
    "DataProgress",
    "DeadlineWarning",
    "EpochPlanned",
    "EvaluationFinished",
    "Event",
    "GpuSlowdown",
    "Metrics",
    "ModelDescribed",
    "OomRecovered",
    "Paused",
    "PhaseChanged",
    "Resumed",
    "RunFailed",
    "RunFinished",
    "RunStarted",
    "SamplesGenerated",
    "ScheduleChanged",
    "ScheduleInfo",
    "StepFinished",
    "Throttled",
    "TokensCounted",
    "WorkersReported",
    "event_from_dict",
    "event_from_json",
    "is_step_line",
]

EVENT_VERSION = 1

#: ``{split: {output feature or "combined": {metric name: value}}}``
Metrics = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclasses.dataclass(frozen=True)
class ScheduleInfo:
    """Where the steps, evaluations and checkpoints of a run fall (0-based step indices).

    ``evaluations_after`` / ``checkpoints_after`` list the steps after which an evaluation
    or a checkpoint happens; ``max_total_steps`` is the plan without early stopping.
    ``evaluation_batches``: batches one evaluation runs (all splits; 0 = unknown), which
    sizes the ETA's evaluation cost before the first evaluation has been timed.
    ``eval_batch_size``: rows per evaluation batch (0 = unknown). ``batch_note``: why the
    batch sizes are what they are, when ``auto`` picked them (the words a user reads, with how
    to pin them); "" otherwise.
    """

    total_steps: int
    steps_per_epoch: int
    epochs: int
    epoch_starts: tuple[int, ...] = ()
    evaluations_after: tuple[int, ...] = ()
    checkpoints_after: tuple[int, ...] = ()
    batch_size: int = 0
    evaluation_batches: int = 0
    eval_batch_size: int = 0
    batch_note: str = ""

    def to_dict(self) -> dict[str, object]:
        """The schedule as a JSON-able dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScheduleInfo:
        """Rebuild a schedule from :meth:`to_dict`'s form (lists become tuples)."""
        kwargs = dict(data)
        for key in ("epoch_starts", "evaluations_after", "checkpoints_after"):
            kwargs[key] = tuple(kwargs.get(key, ()))
        return cls(**kwargs)


@dataclasses.dataclass(frozen=True)
class Event:
    """Base class: every event has a wall-clock ``time`` (seconds)."""

    type: ClassVar[str] = "event"
    time: float

    def to_dict(self) -> dict[str, object]:
        """The event as a JSON-able dict tagged with ``type`` and ``v`` (the event version)."""
        data: dict[str, object] = {"type": self.type, "v": EVENT_VERSION}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            data[name] = value.to_dict() if isinstance(value, ScheduleInfo) else value
        return data

    def to_json(self) -> str:
        """Strict JSON (one line).

        A non-finite number is written as ``null`` and its dotted path listed under ``"nonfinite"``
        (``core.strict_json``).
        """
        data = self.to_dict()
        try:
            return json.dumps(data, separators=(",", ":"), default=_json_default, allow_nan=False)
        except ValueError:  # an overflowing loss or metric: null + the flag, never Infinity
            return json.dumps(
                strict_json.flagged(data),
                separators=(",", ":"),
                default=_json_default,
                allow_nan=False,
            )


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    """Field names per event class, computed once (``to_json`` runs at every step)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in dataclasses.fields(cls))
    return names


#: how ``json`` writes a float (``float.__repr__``, also for float subclasses such as numpy's)
_float_text = float.__repr__
_isfinite = math.isfinite


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if hasattr(value, "item"):  # numpy scalars that slipped through
        return value.item()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


@dataclasses.dataclass(frozen=True)
class RunStarted(Event):
    """The run has its plan: name, engine, device and the schedule the ETA needs.

    ``device`` is the torch device text ("cpu", "cuda:1"); ``host`` (the machine's name) and
    ``device_index`` (the GPU's index on that host, None on CPU) identify the device the
    alarms act on, also when the engine trains on another machine.
    """

    type: ClassVar[str] = "run_started"
    run_id: str
    name: str
    engine: str
    device: str
    schedule: ScheduleInfo
    start_step: int = 0  # > 0 when resumed from a checkpoint
    host: str = ""
    device_index: int | None = None
    #: what one row of a batch is, for the throughput ("images" for a run with image inputs)
    sample_unit: str = "samples"


@dataclasses.dataclass(frozen=True)
class ScheduleChanged(Event):
    """The plan changed mid-run (batch size change, early-stop bound, resume)."""

    type: ClassVar[str] = "schedule_changed"
    schedule: ScheduleInfo
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class PhaseChanged(Event):
    """``phase`` is a run status: queued, preprocessing, training, paused, evaluating, stopping."""

    type: ClassVar[str] = "phase_changed"
    phase: str
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class DataProgress(Event):
    """How far the data is before the first step (additive).

    ``stage``: "reading" (the dataset ``source`` is being read), "read" (it holds ``rows``
    rows and ``columns`` columns, every split together), "preprocessing" (feature ``index``
    of ``total``, 1-based, named ``feature``, fitted on ``rows`` training rows), "loading"
    (the engine's libraries, ``source`` names them: "torch") or "building" (the model).
    On "read", ``fingerprint`` is the table's content fingerprint (``data/fingerprint.py``;
    "" when the engine read it in another process). Emitted on the training thread; the
    reducer words it into ``RunState.phase_detail`` (``core/progress_text.py``), so
    status.json, the sidebar and the CLI show it too.
    """

    type: ClassVar[str] = "data_progress"
    stage: str
    source: str = ""
    rows: int | None = None
    columns: int | None = None
    feature: str = ""
    index: int = 0
    total: int = 0
    fingerprint: str = ""


@dataclasses.dataclass(frozen=True)
class StepFinished(Event):
    """One optimizer step; ``start_time``/``time`` bracket it (data wait included)."""

    type: ClassVar[str] = "step_finished"
    step: int  # 0-based index of the step just finished
    epoch: int  # 0-based epoch the step belongs to
    start_time: float
    batch_size: int
    loss: float | None  # None where the engine does not see each step's loss
    learning_rate: float | None = None
    #: seconds of the step spent waiting for its batch (None where the engine does not know)
    data_wait: float | None = None
    #: LLM runs: the step's tokens that are not padding (prompt + target, Ludwig's count),
    #: and its padded tokens (rows x the batch's longest row: what the step computed on)
    tokens: int | None = None
    padded_tokens: int | None = None

    def to_dict(self) -> dict[str, object]:
        """As :meth:`Event.to_dict`; the token counts only when known (an LLM run's)."""
        data = super().to_dict()
        if self.tokens is None and self.padded_tokens is None:
            del data["tokens"], data["padded_tokens"]
        return data

    def to_json(self) -> str:
        """Strict JSON (one line), the same text as :meth:`Event.to_json` writes.

        Formatted directly when every field is a plain finite ``float``/``int`` or None (the
        event log writes one per step); anything else takes the general path.
        """
        time_, start, loss, rate = self.time, self.start_time, self.loss, self.learning_rate
        wait = self.data_wait
        if (
            type(time_) is float
            and type(start) is float
            and (loss is None or type(loss) is float)
            and (rate is None or type(rate) is float)
            and (wait is None or type(wait) is float)
            and type(self.step) is int
            and type(self.epoch) is int
            and type(self.batch_size) is int
            and self.tokens is None
            and self.padded_tokens is None
            and _isfinite(time_ + start + (loss or 0.0) + (rate or 0.0) + (wait or 0.0))
        ):
            return (
                f'{{"type":"step_finished","v":{EVENT_VERSION},"time":{_float_text(time_)},'
                f'"step":{self.step},"epoch":{self.epoch},"start_time":{_float_text(start)},'
                f'"batch_size":{self.batch_size},'
                f'"loss":{"null" if loss is None else _float_text(loss)},'
                f'"learning_rate":{"null" if rate is None else _float_text(rate)},'
                f'"data_wait":{"null" if wait is None else _float_text(wait)}}}'
            )
        return super().to_json()


@dataclasses.dataclass(frozen=True)
class EvaluationFinished(Event):
    """An evaluation after ``step``; metrics per split, output feature and metric name."""

    type: ClassVar[str] = "evaluation_finished"
    step: int
    epoch: int
    start_time: float
    metrics: Mapping[str, Any]
    improved: bool = False


@dataclasses.dataclass(frozen=True)
class CheckpointSaved(Event):
    """A checkpoint of step ``step`` was written to ``path``.

    ``start_time`` is when the save began (wall-clock s; ``time`` is when it ended); ``best`` marks
    the checkpoint of the best evaluation so far.
    """

    type: ClassVar[str] = "checkpoint_saved"
    step: int
    start_time: float
    path: str
    best: bool = False


#: The ``Paused.reason`` values sent besides an alarm's: "user" (the dashboard's button,
#: ``run.pause()``, ``%ludwig_pause``, a search's pause), "sidebar" (the sidebar's button,
#: through the run's control file) and "control_file" (a control file that names no source).
PAUSE_SOURCES = ("user", "sidebar", "control_file")
#: An alarm whose action is pause sends ``"alarm:<rule name>"``.
ALARM_PAUSE_PREFIX = "alarm:"


@dataclasses.dataclass(frozen=True)
class Paused(Event):
    """``reason``: one of :data:`PAUSE_SOURCES`, or ``"alarm:<rule name>"``."""

    type: ClassVar[str] = "paused"
    step: int
    reason: str = "user"


@dataclasses.dataclass(frozen=True)
class Resumed(Event):
    """The run resumed at step ``step`` after a pause that began at ``paused_at`` (wall-clock s)."""

    type: ClassVar[str] = "resumed"
    step: int
    paused_at: float  # wall time the pause began, so the gap can be costed
    reason: str = "user"


@dataclasses.dataclass(frozen=True)
class AlarmRaised(Event):
    """A GPU alarm rule fired on device ``device``: ``value`` reached ``threshold``.

    ``value`` and ``threshold`` are in the rule's metric unit (°C, % or W); ``action`` is what
    follows: ``warn``, ``pause`` or ``stop``. ``margin``: the GPU's thermal margin then (°C to
    its nearest slowdown point) for a temperature rule, when the GPU reports one; ``clear``:
    the rule's clear level as written (``"80"``, ``"slowdown-10"``, ``"margin>10"``).
    """

    type: ClassVar[str] = "alarm_raised"
    rule: str
    device: int
    value: float
    threshold: float
    action: str  # warn | pause | stop
    message: str = ""
    margin: float | None = None
    clear: str = ""


@dataclasses.dataclass(frozen=True)
class AlarmCleared(Event):
    """A raised alarm rule cleared on device ``device`` (``value`` fell below its clear level)."""

    type: ClassVar[str] = "alarm_cleared"
    rule: str
    device: int
    value: float


@dataclasses.dataclass(frozen=True)
class Throttled(Event):
    """The training loop's duty cycle changed.

    It trains ``duty`` of the time (1.0: the throttle released). ``metric`` ("temperature" °C or
    "power" W) on GPU ``device`` read ``value`` against ``target``; ``idle_s``: idle seconds
    inserted so far in the run; ``method``: "duty" (idle time between steps) or "power_limit" (a
    board power cap).
    """

    type: ClassVar[str] = "throttled"
    duty: float
    reason: str = ""
    device: int = -1
    metric: str = ""
    value: float = 0.0
    target: float = 0.0
    idle_s: float = 0.0
    method: str = "duty"


@dataclasses.dataclass(frozen=True)
class GpuSlowdown(Event):
    """GPU ``device`` started (``active``) or stopped losing much time to throttling.

    ``share``: the fraction of the last minute its clocks were held down (0..1); ``causes``:
    the throttle causes at work (``core/throttle_time.py``); ``clock_ratio``: its SM clock
    now over the clock before (a step's time scales by about its inverse), None when
    unknown; ``text``: the sentence the views show.
    """

    type: ClassVar[str] = "gpu_slowdown"
    device: int
    active: bool
    share: float
    causes: tuple[str, ...] = ()
    clock_ratio: float | None = None
    text: str = ""


@dataclasses.dataclass(frozen=True)
class DeadlineWarning(Event):
    """A word on the run's deadline: a warning, or the action taken to save in time.

    ``kind``: ``warn`` (unlikely to finish in time), ``checkpoint`` or ``stop`` (the action
    fired to save before the cut-off). ``deadline``: wall-clock seconds; ``verdict``:
    ``at_risk``, ``late``, ``ok`` or ``unknown`` (``core/deadline.py``); ``message``: the
    sentence the views show.
    """

    type: ClassVar[str] = "deadline_warning"
    kind: str
    deadline: float
    verdict: str
    message: str


@dataclasses.dataclass(frozen=True)
class WorkersReported(Event):
    """The workers of a distributed run (engine: ray), one mapping per rank, rank order.

    Each has ``rank``, ``host``, ``node_id``, ``device`` ("cpu", "cuda:0"), ``gpu`` (the
    run-wide number of the GPU it trains on, None on CPU), ``steps`` (done by that rank),
    ``steps_per_s`` (recent rate, None before two steps), ``idle_s`` (idle seconds the
    throttle inserted), ``age_s`` (seconds since the rank last reported). Sent about once a
    second while anything changed.
    """

    type: ClassVar[str] = "workers_reported"
    workers: tuple[Mapping[str, object], ...] = ()


@dataclasses.dataclass(frozen=True)
class OomRecovered(Event):
    """A step ran out of GPU memory and was redone in micro-batches.

    Step ``step`` ran out of GPU memory and was redone in ``accumulation`` micro-batches of at most
    ``micro_batch_size`` rows each; the step's ``batch_size`` (and so the effective batch) is
    unchanged.
    """

    type: ClassVar[str] = "oom_recovered"
    step: int
    batch_size: int
    micro_batch_size: int
    accumulation: int
    message: str = ""


@dataclasses.dataclass(frozen=True)
class BaselineComputed(Event):
    """The trivial baseline (majority class / training mean) scored on every split.

    ``metrics`` has the shape of ``EvaluationFinished.metrics``; ``predictors`` says per
    output feature what the baseline predicts ("always 'no'", "always the mean 23.5").
    """

    type: ClassVar[str] = "baseline_computed"
    metrics: Mapping[str, object]
    predictors: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ModelDescribed(Event):
    """An LLM run's model, once loaded: what it is and how much of it trains.

    ``trainable`` / ``total``: parameters (a quantized weight counts its parameters).
    ``adapter``: "lora", "adalora", "ia3" or "" (every weight trains). ``quantization``: "4-bit"
    / "8-bit" / "". ``dtype``: the weights' torch dtype. ``estimate_bytes``: the memory the
    pre-flight estimated for a step on the device (None when none was made).
    """

    type: ClassVar[str] = "model_described"
    base_model: str
    architecture: str
    trainable: int
    total: int
    adapter: str = ""
    quantization: str = ""
    dtype: str = ""
    gradient_checkpointing: bool = False
    estimate_bytes: int | None = None


@dataclasses.dataclass(frozen=True)
class TokensCounted(Event):
    """An LLM run's data, tokenized: per split its rows and token lengths.

    ``splits``: ``{split: {"rows", "tokens", "longest", "mean", "truncated", "longest_before"}}``
    (tokens of prompt + target + end of sequence; ``truncated`` rows lost tokens to ``limit``,
    the shortest of the configured maximum lengths, None without one).
    """

    type: ClassVar[str] = "tokens_counted"
    splits: Mapping[str, Mapping[str, float]]
    limit: int | None = None


@dataclasses.dataclass(frozen=True)
class EpochPlanned(Event):
    """An LLM epoch's batches, once ordered: what each of its steps will compute on.

    ``first_step``: the epoch's first step (0-based). ``padded_tokens[i]`` / ``tokens[i]``: the
    padded and non-padding tokens of step ``first_step + i``. A token-aware ETA sums its
    per-token cost over the steps still to come (``core/eta/``).
    """

    type: ClassVar[str] = "epoch_planned"
    epoch: int
    first_step: int
    padded_tokens: tuple[int, ...] = ()
    tokens: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class SamplesGenerated(Event):
    """Answers an LLM generated at an evaluation, beside the expected ones.

    ``samples``: up to five ``{"prompt", "expected", "generated"}`` of ``split``.
    """

    type: ClassVar[str] = "samples_generated"
    step: int
    split: str
    samples: tuple[Mapping[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class RunFinished(Event):
    """``status`` is "completed" or "stopped"; ``reason`` says why it ended.

    ``warnings``: what the run's history says went wrong with the model it kept, each a
    sentence with what to change (``core/hindsight.py``; the run layer adds them).
    """

    type: ClassVar[str] = "run_finished"
    status: str
    step: int
    reason: str = ""
    best_metrics: Mapping[str, object] = dataclasses.field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class RunFailed(Event):
    """The run failed at step ``step``: the exception's type name, message and traceback text."""

    type: ClassVar[str] = "run_failed"
    step: int
    error_type: str
    message: str
    traceback: str = ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RunStarted,
        ScheduleChanged,
        PhaseChanged,
        StepFinished,
        EvaluationFinished,
        CheckpointSaved,
        Paused,
        Resumed,
        AlarmRaised,
        AlarmCleared,
        Throttled,
        OomRecovered,
        RunFinished,
        RunFailed,
        BaselineComputed,
        WorkersReported,
        DataProgress,
        GpuSlowdown,
        DeadlineWarning,
        ModelDescribed,
        TokensCounted,
        EpochPlanned,
        SamplesGenerated,
    )
}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its ``to_dict`` form; raises ``ValueError`` on unknown types."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    if "schedule" in kwargs:
        kwargs["schedule"] = ScheduleInfo.from_dict(kwargs["schedule"])
    if "workers" in kwargs:
        kwargs["workers"] = tuple(dict(w) for w in kwargs["workers"])
    if "causes" in kwargs:
        kwargs["causes"] = tuple(kwargs["causes"])
    if "warnings" in kwargs:
        kwargs["warnings"] = tuple(str(w) for w in kwargs["warnings"])
    if "samples" in kwargs:
        kwargs["samples"] = tuple(dict(s) for s in kwargs["samples"])
    for key in ("padded_tokens", "tokens"):
        if isinstance(kwargs.get(key), list):
            kwargs[key] = tuple(kwargs[key])
    return cls(**kwargs)


def event_from_json(line: str) -> Event:
    """Parse one ``events.ndjson`` line into its event.

    Raises:
        ValueError: The line is not JSON, or :func:`event_from_dict` rejects it.
    """
    return event_from_dict(json.loads(line))


#: how an ``events.ndjson`` line of a ``StepFinished`` starts (the fast and the general path)
_STEP_PREFIXES = (b'{"type":"step_finished"', b'{"type": "step_finished"')


def is_step_line(line: bytes) -> bool:
    """Whether an ``events.ndjson`` line (bytes) is a ``StepFinished`` one, without parsing it.

    Readers that want a log's evaluations and phases (compare, a search's statistics) skip
    the steps, nearly all of a long run's lines, for the cost of a prefix test.
    """
    return line.lstrip().startswith(_STEP_PREFIXES)
