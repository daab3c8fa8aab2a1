"""A Tune trial's side, in its Tune actor: the built-in loop reporting to Tune.

The trial waits for the notebook's assignment (its run folder, rendered config, seed,
threads, device, and the run's stop/pause state at its start), trains the built-in
engine's ``Training`` loop there, pushes its events to the channel in batches, and reports
the hyperopt metric to Tune with ``tune.report`` at each evaluation only, never per step.
"""

from __future__ import annotations

import contextlib
import math
import socket
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.engines.base import TrainJob
from ludwig_nb.engines.ray.process_log import log_to_file
from ludwig_nb.engines.ray.tune.spec import NAMESPACE
from ludwig_nb.engines.ray.tune.storage import TRIAL_LOG

__all__ = ["ASSIGN_TIMEOUT_S", "make_trainable", "metric_value", "trial_main"]

#: seconds a trial waits for the notebook to give it a run folder
ASSIGN_TIMEOUT_S = 300.0


class _TrialClient:
    """A trial's handle on the channel.

    Pushes never wait; the control state is refreshed without waiting at each step and,
    synchronously, before training and after each ``tune.report`` (so that a pause asked
    for before the trial started holds it before its first step, and a prune decided on a
    report lands before the next step).
    """

    def __init__(self, actor: Any, tune_id: str) -> None:
        self.actor, self.tune_id = actor, tune_id
        self._pending: Any = None
        self._last: tuple[str | None, str | None] = (None, None)

    def push(self, batch: list[Any]) -> None:
        self.actor.push.remote(self.tune_id, batch)

    def refresh(self) -> None:
        import ray

        self._last = ray.get(self.actor.control.remote(self.tune_id), timeout=60)
        self._pending = None

    def control_nowait(self) -> tuple[str | None, str | None]:
        import ray

        if self._pending is None:
            self._pending = self.actor.control.remote(self.tune_id)
        ready, _ = ray.wait([self._pending], timeout=0)
        if ready:
            self._last = ray.get(self._pending)
            self._pending = self.actor.control.remote(self.tune_id)
        return self._last

    def control_wait(self, timeout: float) -> tuple[str | None, str | None]:
        time.sleep(timeout)
        self.refresh()
        return self._last


def metric_value(event: ev.EvaluationFinished, path: tuple[str, str, str]) -> float | None:
    """The hyperopt metric in an evaluation's metrics, or None (absent, not finite)."""
    split, feature, metric = path
    value = (event.metrics.get(split) or {}).get(feature, {}).get(metric)
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


class _Reporter:
    """The trial's ``emit``: events to the channel, the metric to Tune at each evaluation.

    Each report carries ``metric``, ``evaluation`` (1, 2, ...) and ``planned`` (the
    evaluations of the trial's plan, from its ``RunStarted``), so the scheduler can tell a
    trial's budget (``max_t``) ending before its plan from the plan's end.
    """

    def __init__(self, client: _TrialClient, batcher: Any, path: tuple[str, str, str]) -> None:
        self.client, self.batcher, self.path = client, batcher, path
        self.evaluations, self.planned = 0, 0

    def __call__(self, event: ev.Event) -> None:
        from ray import tune

        self.batcher(event)
        if isinstance(event, ev.RunStarted):
            self.planned = len(event.schedule.evaluations_after)
        if isinstance(event, ev.EvaluationFinished):
            value = metric_value(event, self.path)
            if value is not None:
                self.evaluations += 1
                tune.report(
                    {"metric": value, "evaluation": self.evaluations, "planned": self.planned}
                )
                self.client.refresh()


def _job(info: dict[str, Any], dataset: Any) -> TrainJob:
    folder = Path(info.get("folder") or info["run_dir"])  # the storage's, else the run dir
    return TrainJob(
        config=info["config"],
        dataset=dataset,
        run_dir=folder,
        run_id=info["run_id"],
        name=info["name"],
        device=info.get("device"),
        seed=info.get("seed"),
        threads=info.get("threads"),
    )


def trial_main(params: dict[str, Any], channel: str, dataset: Any, metric_path: Any) -> None:
    """One Tune trial, in its actor.

    Wait for the notebook's assignment, train the built-in loop, report the metric at each
    evaluation. Raises what training raises.
    """
    import ray
    import torch
    from ray import tune

    from ludwig_nb.engines.builtin.trainer import Training
    from ludwig_nb.engines.ray.channel import EventBatcher
    from ludwig_nb.engines.ray.worker_control import WorkerControl

    del params  # the notebook applied them: the assignment holds the trial's config
    tune_id = tune.get_context().get_trial_id()
    actor = ray.get_actor(channel, namespace=NAMESPACE)
    info = ray.get(actor.assignment.remote(tune_id, ASSIGN_TIMEOUT_S))
    if info is None or "refused" in info:
        reason = (info or {}).get("refused", "the notebook gave the trial no run directory")
        ray.get(actor.end.remote(tune_id, reason))
        return
    client = _TrialClient(actor, tune_id)
    batcher = EventBatcher(client.push)
    job = _job(info, dataset)
    error = None
    try:
        with log_to_file(Path(job.run_dir) / TRIAL_LOG):
            torch.set_num_threads(max(1, int(job.threads or 1)))
            client.refresh()  # a pause or stop asked for before the trial started holds now
            control = WorkerControl(client.control_nowait, client.control_wait)
            Training(
                job, _Reporter(client, batcher, tuple(metric_path)), control, engine="ray"
            ).run()
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc} (on {socket.gethostname()})"
        with contextlib.suppress(Exception), open(Path(job.run_dir) / TRIAL_LOG, "a") as out:
            out.write("".join(traceback.format_exception(exc)))
        raise
    finally:
        batcher.flush()
        with contextlib.suppress(Exception):
            ray.get(actor.end.remote(tune_id, error), timeout=60)


def make_trainable(
    root: str, channel: str, metric_path: tuple[str, str, str]
) -> Callable[..., None]:
    """The function Tune runs, made here so that it pickles by value.

    Its actor finds ludwig_nb through ``root`` (the folder this ludwig_nb is imported from).
    """

    def trainable(params: dict[str, Any], dataset: Any = None) -> None:
        if root not in sys.path:
            sys.path.insert(0, root)
        from ludwig_nb.engines.ray.tune.trial import trial_main

        trial_main(params, channel, dataset, metric_path)

    return trainable
