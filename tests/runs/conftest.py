"""A scripted engine: the engine seam of the run layer, driven step by step by the test."""

import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import StopRequested
from ludwig_nb.engines.base import Engine, TrainJob
from ludwig_nb.runs.run import Run

#: the small binary task most run-layer tests train: ``a`` decides ``y``, ``b`` is noise
AB_FEATURES = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
"""


def ab_config(trainer):
    """The ``AB_FEATURES`` config with ``trainer`` (a YAML flow mapping) as its trainer."""
    return f"{AB_FEATURES}trainer: {trainer}\n"


def ab_frame(rows, seed=0):
    """``rows`` rows of the ``AB_FEATURES`` task: ``y`` is ``a > 0``, ``b`` random in p/q/r."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=rows)
    return pd.DataFrame({"a": a, "b": rng.choice(["p", "q", "r"], rows), "y": a > 0})


def until(predicate, timeout=60.0):
    """Wait for another thread to reach a state (synchronisation, not timing)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


class BareEngine(Engine):
    """Only what every engine must have; the engine protocol's defaults do the rest."""

    name = "bare"

    def check(self, config):
        pass

    def prepare_data(self, config, dataset):
        return dataset

    def plan(self, config, rows):
        raise NotImplementedError

    def warm_up(self):
        pass

    def fit(self, job, emit, control):
        return None

    def load(self, folder, manifest):
        raise NotImplementedError


class ScriptedEngine(Engine):
    """Runs ``steps`` steps; each waits for the test to ``release()`` it (no sleeps)."""

    name = "scripted"

    def __init__(self, steps=5, fail_at=None, gated=False):
        self.steps = steps
        self.fail_at = fail_at
        self.gate = threading.Semaphore(0) if gated else None
        self.clock = iter(float(t) for t in range(1000))

    def release(self, n=1):
        for _ in range(n):
            self.gate.release()

    def fit(self, job, emit, control):
        now = lambda: next(self.clock)  # noqa: E731
        schedule = ev.ScheduleInfo(
            total_steps=self.steps, steps_per_epoch=self.steps, epochs=1, batch_size=4
        )
        emit(
            ev.RunStarted(
                time=now(),
                run_id=job.run_id,
                name=job.name,
                engine=self.name,
                device="cpu",
                schedule=schedule,
            )
        )
        step = 0
        try:
            for step in range(self.steps):
                if self.gate is not None:
                    self.gate.acquire()
                control.checkpoint()  # the run's control polls the control file here
                control.wait_while_paused(
                    on_pause=lambda r, s=step: emit(ev.Paused(time=now(), step=s, reason=r)),
                    on_resume=lambda r, s=step: emit(ev.Resumed(time=now(), step=s, paused_at=0)),
                    poll_interval=0.01,
                )
                control.checkpoint()
                if step == self.fail_at:
                    raise RuntimeError(f"boom at step {step}")
                t = now()
                emit(
                    ev.StepFinished(
                        time=t,
                        step=step,
                        epoch=0,
                        start_time=t - 0.5,
                        batch_size=4,
                        loss=1.0 / (step + 1),
                    )
                )
        except StopRequested as stop:
            emit(ev.RunFinished(time=now(), status="stopped", step=step, reason=str(stop)))
            return "model"
        emit(ev.RunFinished(time=now(), status="completed", step=self.steps))
        return "model"


def make_run(tmp_path: Path, engine: ScriptedEngine, name="r") -> Run:
    directory = tmp_path / f"{name}-1"
    job = TrainJob(config={}, dataset=None, run_dir=directory, run_id=f"{name}-1", name=name)
    return Run(run_id=f"{name}-1", name=name, directory=directory, engine=engine, job=job)


@pytest.fixture
def scripted():
    return ScriptedEngine
