"""Pre-flight: predict how long a run will take, and what memory it needs, before starting it.

A short pilot trains the same model on the same data (``pilot_steps`` steps, then one
evaluation and one checkpoint) in a throw-away directory. Its events give the stable step
time (the ETA estimator's warm-up detection), the cost of an evaluation, of a checkpoint,
of preprocessing and of saving the model; ``EtaEstimator.predict_total`` then costs the
full run's schedule (epochs, steps per epoch, where evaluations and checkpoints fall).

A language model's steps cost by their tokens: the pilot's steps give a step-time model
(a constant plus a per-token cost, ``core/eta/tokens.py``) and its first epoch's plan the
padded tokens of every batch, so the prediction is the run's tokens at the pilot's
tokens/s. Where the engine estimates memory (an LLM config on the built-in engine) the
prediction carries that estimate too (:attr:`Prediction.memory`).
"""

from __future__ import annotations

import copy
import dataclasses
import html
import itertools
import statistics
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.eta import Costs, EtaEstimator, EtaTracker, Schedule
from ludwig_nb.core.eta.tokens import Shape
from ludwig_nb.core.formatting import format_duration
from ludwig_nb.engines.base import Engine
from ludwig_nb.engines.registry import AUTO, select_engine

if TYPE_CHECKING:
    from ludwig_nb.config import ConfigSource
    from ludwig_nb.core.memory_estimate import MemoryEstimate

__all__ = ["Prediction", "estimate", "pilot_run", "predict_from_pilot"]

_DEFAULT_PILOT_STEPS = 60


@dataclasses.dataclass(frozen=True)
class Prediction:
    """The predicted wall time of a whole run (seconds), with an 80 % interval.

    ``breakdown``: seconds of preprocessing, training steps, warm-up, evaluations,
    checkpoints and the final model save. ``schedule``: the plan that was costed.
    """

    total_s: float
    low_s: float
    high_s: float
    breakdown: Mapping[str, float]
    schedule: ev.ScheduleInfo
    step_s: float
    pilot_steps: int
    pilot_s: float
    early_stopping: bool = False  # True: the total is an upper bound
    #: a language model's run: padded tokens to train (the first epoch as planned, later
    #: ones at its mean) and the pilot's padded tokens per second of step time
    tokens: int | None = None
    tokens_per_s: float | None = None
    #: the GPU memory a step needs, where the engine estimates it (an LLM config)
    memory: MemoryEstimate | None = None

    @property
    def _bound_note(self) -> str:
        if not self.early_stopping:
            return ""
        return " (an upper bound: early stopping may end the run sooner)"

    def __str__(self) -> str:
        parts = ", ".join(
            f"{name.replace('_', ' ')} {format_duration(seconds)}"
            for name, seconds in self.breakdown.items()
            if seconds >= 0.05
        )
        text = (
            f"≈ {format_duration(self.total_s)} ({format_duration(self.low_s)} – "
            f"{format_duration(self.high_s)}) for {self.schedule.total_steps} steps "
            f"({self.schedule.epochs} epochs){self._bound_note}: {parts}"
        )
        if self.tokens is not None and self.tokens_per_s:
            text += (
                f"\n{self.tokens:,} padded tokens at {self.tokens_per_s:,.0f} tokens/s "
                "(the pilot's, on this machine)"
            )
        return text + (f"\n{self.memory}" if self.memory is not None else "")

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(name.replace('_', ' '))}</td>"
            f"<td style='text-align:right'>{html.escape(format_duration(s))}</td></tr>"
            for name, s in self.breakdown.items()
        )
        return (
            f"<b>Predicted run time ≈ {html.escape(format_duration(self.total_s))}</b> "
            f"(80% interval {html.escape(format_duration(self.low_s))} – "
            f"{html.escape(format_duration(self.high_s))}), "
            f"{self.schedule.total_steps} steps, {self.schedule.epochs} epochs, "
            f"{self.step_s * 1000:.1f} ms/step{html.escape(self._bound_note)}"
            f"<table>{rows}</table><small>from a {self.pilot_steps}-step pilot that took "
            f"{html.escape(format_duration(self.pilot_s))}{self._tokens_html}</small>"
            + (self.memory._repr_html_() if self.memory is not None else "")
        )

    @property
    def _tokens_html(self) -> str:
        if self.tokens is None or not self.tokens_per_s:
            return ""
        return f"; {self.tokens:,} padded tokens at {self.tokens_per_s:,.0f} tokens/s"


def _pilot_config(rendered: Mapping[str, Any], steps: int) -> dict[str, object]:
    config = copy.deepcopy(dict(rendered))
    trainer = config["trainer"]
    trainer.update(
        train_steps=steps, steps_per_checkpoint=steps, checkpoints_per_epoch=0, early_stop=-1
    )
    config.get("gpu_watch", {})["enabled"] = False
    return config


def _durations(events: list[ev.Event], kind: type[ev.Event]) -> list[float]:
    return [e.time - e.start_time for e in events if isinstance(e, kind)]  # type: ignore[attr-defined]


def _phase_time(events: list[ev.Event], phase: str) -> float | None:
    return next(
        (e.time for e in events if isinstance(e, ev.PhaseChanged) and e.phase == phase), None
    )


def _full_schedule(
    engine: Engine, rendered: Mapping[str, Any], pilot: ev.ScheduleInfo
) -> ev.ScheduleInfo:
    """The full run's plan, from the engine, at the batch size the pilot settled on."""
    config = copy.deepcopy(dict(rendered))
    config["trainer"]["batch_size"] = pilot.batch_size
    return engine.plan(config, pilot.steps_per_epoch * pilot.batch_size)


def estimate(
    config: ConfigSource,
    dataset: object,
    *,
    device: str | None = None,
    pilot_steps: int | None = None,
    engine: str = AUTO,
) -> Prediction:
    """Run a short pilot and predict the whole run's duration (see the module doc).

    Raises ``ConfigError`` / ``DataError`` like :func:`ludwig_nb.train`, and
    ``RuntimeError`` if the pilot itself fails.
    """
    from ludwig_nb.config import Config, load_config

    cfg = config if isinstance(config, Config) else load_config(config)
    chosen = select_engine(engine, cfg)
    rendered = cfg.to_dict()
    chosen.warm_up()  # the pilot's first steps must measure the run, not one-off imports

    steps = pilot_steps or _DEFAULT_PILOT_STEPS
    memory = _memory(chosen, rendered, dataset)
    run = pilot_run(rendered, dataset, steps, device=device, engine=chosen)
    if run.status != "completed":
        raise RuntimeError(f"the pilot run did not complete: {run.state.error or run.status}")
    prediction = _predict(list(run.events), rendered, chosen)
    return dataclasses.replace(prediction, memory=memory)


def _memory(engine: Engine, rendered: Mapping[str, Any], dataset: object) -> MemoryEstimate | None:
    """The engine's memory estimate of the run, where it makes one (an LLM's), else None."""
    return engine.estimate_memory(rendered, dataset)


def pilot_run(
    rendered: Mapping[str, object],
    dataset: object,
    steps: int,
    *,
    device: str | None,
    engine: Engine,
) -> Any:
    """Train a short pilot run in a throw-away directory.

    Train the pilot (``steps`` steps, one evaluation, one checkpoint) in a throw-away directory and
    return its finished ``Run`` (whatever its status).
    """
    from ludwig_nb.runs.api import train

    with tempfile.TemporaryDirectory(prefix="ludwig_nb-pilot-") as tmp:
        return train(
            _pilot_config(rendered, steps),
            dataset,
            name="pilot",
            results_dir=tmp,
            device=device,
            engine=engine.name,
            registry_dir=Path(tmp) / "registry",
            wait=True,
        )


def predict_from_pilot(run: Any, rendered: Mapping[str, Any], engine: Engine) -> Prediction:
    """The :class:`Prediction` from a completed pilot ``run`` (see :func:`pilot_run`)."""
    return _predict(list(run.events), rendered, engine)


def _predict(events: list[ev.Event], rendered: Mapping[str, Any], engine: Engine) -> Prediction:
    trainer = rendered["trainer"]
    started = next(e for e in events if isinstance(e, ev.RunStarted))
    step_events = [e for e in events if isinstance(e, ev.StepFinished)]
    tracker = EtaTracker()
    for event in events:
        tracker.observe(event)
    live = tracker.estimate(step_events[-1].time)
    durations = [b.time - a.time for a, b in itertools.pairwise(step_events)]
    step_s = live.step_s if live is not None else statistics.median(durations)
    warmup_s = max(0.0, sum(durations) - step_s * len(durations))
    spread = statistics.pstdev(durations) if len(durations) > 1 else 0.0
    evaluations = _durations(events, ev.EvaluationFinished)
    checkpoints = _durations(events, ev.CheckpointSaved)
    full = _full_schedule(engine, rendered, started.schedule)
    schedule = Schedule(
        total_steps=full.total_steps,
        epoch_starts=full.epoch_starts,
        evaluations_after=full.evaluations_after,
        checkpoints_after=full.checkpoints_after,
        batch_size=full.batch_size,
    )
    tokens = _token_costs(tracker, events, step_events)
    costs = Costs(
        step_s=tokens.level_s if tokens else step_s,
        evaluation_s=statistics.median(evaluations) if evaluations else None,
        checkpoint_s=statistics.median(checkpoints) if checkpoints else None,
        token_reference=tokens.reference if tokens else None,
        token_share=tokens.shape.share if tokens else None,
        token_quadratic=tokens.shape.quadratic if tokens else 0.0,
    )
    body = EtaEstimator.predict_total(
        schedule,
        costs,
        step_sd_s=spread,
        warmup_s=warmup_s,
        step_tokens=tokens.plan if tokens else (),
    )
    first = events[0].time
    preprocessing = started.time - (_phase_time(events, "preprocessing") or first)
    last_checkpoint = max((e.time for e in events if isinstance(e, ev.CheckpointSaved)), default=0)
    finished = events[-1].time
    finalize = max(0.0, finished - last_checkpoint) if last_checkpoint else 0.0
    breakdown = {"preprocessing": preprocessing, **body.breakdown, "final_save": finalize}
    extra = preprocessing + finalize
    return Prediction(
        total_s=body.remaining_s + extra,
        low_s=body.low_s + extra,
        high_s=body.high_s + extra,
        breakdown=breakdown,
        schedule=full,
        step_s=step_s,
        pilot_steps=len(step_events),
        pilot_s=finished - first,
        early_stopping=int(trainer.get("early_stop", 5)) >= 0
        and not trainer.get("skip_all_evaluation"),
        tokens=_run_tokens(tokens.plan, schedule.total_steps) if tokens else None,
        tokens_per_s=tokens.per_s if tokens else None,
    )


@dataclasses.dataclass(frozen=True)
class _TokenCosts:
    """A pilot's step-time model in tokens, and its first epoch's padded tokens per step."""

    level_s: float  # a step of ``reference`` padded tokens, seconds
    shape: Shape
    reference: float
    plan: tuple[int, ...]
    per_s: float  # padded tokens per second of step time


def _token_costs(
    tracker: EtaTracker, events: list[ev.Event], steps: list[ev.StepFinished]
) -> _TokenCosts | None:
    """The token model of a pilot whose steps counted tokens; None for other runs."""
    estimator = tracker.estimator
    model = estimator.token_model if estimator is not None else None
    if model is None:
        return None
    plan = next((e for e in events if isinstance(e, ev.EpochPlanned) and e.first_step == 0), None)
    counted = [s for s in steps[1:] if s.padded_tokens]
    seconds = sum(s.time - s.start_time for s in counted)
    per_s = sum(s.padded_tokens or 0 for s in counted) / seconds if seconds > 0 else 0.0
    level, shape, reference = model
    return _TokenCosts(level, shape, reference, plan.padded_tokens if plan else (), per_s)


def _run_tokens(first_epoch: tuple[int, ...], total_steps: int) -> int:
    """Padded tokens of ``total_steps`` steps: the first epoch's, then its mean per step."""
    if not first_epoch:
        return 0
    known = sum(first_epoch[:total_steps])
    rest = max(0, total_steps - len(first_epoch))
    return round(known + rest * sum(first_epoch) / len(first_epoch))
