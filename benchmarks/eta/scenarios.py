"""Synthetic training traces with the phenomena that break ETAs.

A trace is a list of ``ludwig_nb.core.events`` events, exactly what a real run writes to
``events.ndjson``, so synthetic and recorded traces replay through the same harness.

Phenomena (each scenario switches some on): a compile spike on step 0, a multi-step
warm-up ramp, log-normal noise with AR(1) correlation, heavy-tailed stragglers (Pareto),
an evaluation after every epoch (the first one slower), checkpoints every 100 steps (the
first slower), a slow first step in every epoch (loader workers restarting), a thermal
throttling ramp, a batch-size change (doubling: fewer, slower steps), slow drift, and a
user pause.
"""

from __future__ import annotations

import dataclasses
import math
import random

from ludwig_nb.core import events as ev

__all__ = ["SCENARIOS", "STATIONARY", "Trace", "generate"]

T0 = 1_790_000_000.0  # a wall-clock origin, seconds
_EVAL_BATCHES = 100
_THROTTLE_RAMP = 80  # steps from the start of throttling to its full effect


@dataclasses.dataclass(frozen=True)
class Trace:
    """One run: its events, the steps where its regime changed, and whether it is
    stationary (no regime change, so an honest interval should cover ~80 %).

    ``changes`` are the first steps of each change: a throttling ramp's start, a batch
    size change's first step. ``settled`` (same length, or empty) are the steps where each
    change is complete (a ramp's end); they feed an informational score only.
    """

    name: str
    events: tuple[ev.Event, ...]
    changes: tuple[int, ...] = ()
    stationary: bool = False
    settled: tuple[int, ...] = ()


_FEATURES: dict[str, frozenset[str]] = {
    "clean": frozenset(),
    "warmup": frozenset({"ramp"}),
    "eval": frozenset({"eval"}),
    "checkpoints": frozenset({"eval", "ckpt"}),
    "epoch_start": frozenset({"eval", "epoch_start"}),
    "heavy_tail": frozenset({"eval", "heavy"}),
    "throttle": frozenset({"ramp", "eval", "throttle"}),
    "batch_change": frozenset({"eval", "batch_change"}),
    "drift": frozenset({"eval", "drift"}),
    "realistic": frozenset({"ramp", "eval", "ckpt", "epoch_start", "heavy", "throttle", "pause"}),
}
SCENARIOS = tuple(_FEATURES)
STATIONARY = ("clean", "warmup", "eval", "checkpoints", "epoch_start")


@dataclasses.dataclass
class _Plan:
    total: int
    per_epoch: int
    batch: int
    change_at: int | None = None  # batch-size change at this step (epoch boundary)
    features: frozenset[str] = frozenset()

    def info(self) -> ev.ScheduleInfo:
        starts, evals, ckpts = [], [], []
        step, per = 0, self.per_epoch
        while step < self.total:
            if self.change_at is not None and step >= self.change_at:
                per = self.per_epoch // 2
            starts.append(step)
            evals.append(min(self.total, step + per) - 1)
            step += per
        ckpts = list(range(99, self.total, 100)) if "ckpt" in self.features else []
        if "eval" not in self.features:
            evals = []
        return ev.ScheduleInfo(
            total_steps=self.total,
            steps_per_epoch=self.per_epoch,
            epochs=len(starts),
            epoch_starts=tuple(starts),
            evaluations_after=tuple(evals),
            checkpoints_after=tuple(ckpts),
            batch_size=self.batch,
            evaluation_batches=_EVAL_BATCHES,
        )


def _step_factor(features: frozenset[str], i: int, total: int, throttle_at: int) -> float:
    f = 1.0
    if "ramp" in features:
        f *= 1.0 + 1.5 * math.exp(-i / 20.0)
    if "throttle" in features and i >= throttle_at:
        f *= 1.0 + 0.3 * min(1.0, (i - throttle_at) / _THROTTLE_RAMP)
    if "drift" in features:
        f *= 1.0 + 0.25 * i / total
    return f


def generate(scenario: str, seed: int, steps: int = 2000, step_s: float = 0.25) -> Trace:
    """One synthetic run of ``scenario`` (a name in ``SCENARIOS``); seconds throughout."""
    features = _FEATURES[scenario]
    rng = random.Random(f"{scenario}:{seed}")
    per_epoch = 200
    plan = _Plan(total=steps, per_epoch=per_epoch, batch=32, features=features)
    changes: list[int] = []
    settled: list[int] = []
    throttle_at = int(steps * (0.6 if scenario == "realistic" else 0.4))
    if "throttle" in features:
        changes.append(throttle_at)
        settled.append(throttle_at + _THROTTLE_RAMP)
    pause_at = int(steps * 0.3) if "pause" in features else -1
    out: list[ev.Event] = [
        ev.RunStarted(T0, f"{scenario}-{seed}", scenario, "synthetic", "cpu", plan.info())
    ]
    t, i, epoch, evals_done, ckpts_done, ar = T0, 0, 0, 0, 0, 0.0
    slow = 1.0
    # What one evaluation batch costs relative to a training step varies by model; the
    # estimator's prior assumes 0.35.
    eval_ratio = rng.uniform(0.2, 0.6)
    info = plan.info()
    while i < plan.total:
        if "batch_change" in features and not changes and i == steps // 2:
            plan.change_at, plan.total, plan.batch = i, i + (steps - i) // 2, 64
            info = plan.info()
            slow = 1.8
            changes.append(i)
            settled.append(i)
            out.append(ev.ScheduleChanged(t, info, reason="batch_size"))
        ar = 0.9 * ar + rng.gauss(0.0, 0.03)
        d = step_s * slow * math.exp(rng.gauss(0.0, 0.08) + ar)
        d *= _step_factor(features, i, steps, throttle_at)
        if i == 0:
            d *= rng.uniform(20, 40)  # compile
        if "heavy" in features and rng.random() < 0.03:
            d *= min(30.0, 1.5 * rng.paretovariate(1.5))
        if "epoch_start" in features and i in info.epoch_starts and i > 0:
            d += 15 * step_s * math.exp(rng.gauss(0.0, 0.1))
        if i in info.epoch_starts[1:]:
            epoch += 1
        out.append(ev.StepFinished(t + d, i, epoch, t, plan.batch, 1.0))
        t += d
        if "eval" in features and i in info.evaluations_after:
            e = _EVAL_BATCHES * eval_ratio * step_s * math.exp(rng.gauss(0.0, 0.05))
            e *= 2.5 if not evals_done else 1.0
            out.append(ev.EvaluationFinished(t + e, i, epoch, t, {}))
            t += e
            evals_done += 1
        if "ckpt" in features and i in info.checkpoints_after:
            c = 4 * step_s * math.exp(rng.gauss(0.0, 0.1)) * (2.0 if not ckpts_done else 1)
            out.append(ev.CheckpointSaved(t + c, i, t, ""))
            t += c
            ckpts_done += 1
        if i == pause_at:
            out.append(ev.Paused(t, i))
            out.append(ev.Resumed(t + 60.0, i, t))
            t += 60.0
        i += 1
    out.append(ev.RunFinished(t, "completed", plan.total))
    return Trace(
        name=scenario,
        events=tuple(out),
        changes=tuple(changes),
        stationary=scenario in STATIONARY,
        settled=tuple(settled),
    )
