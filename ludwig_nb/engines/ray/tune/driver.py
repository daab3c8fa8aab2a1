"""The driver of a Tune experiment: :func:`run_tune`, on the search's thread in the kernel.

It starts (or joins) Ray, creates the search's channel actor (``num_cpus=0``), and runs one
``Tuner`` whose trainable is :func:`~ludwig_nb.engines.ray.tune.trial.trial_main` with
``cpu``/``gpu`` resources per trial (fractions allowed) and whose search algorithm runs as
many trials at once as ``max_concurrent_trials`` says, else as fit on the Ray's CPUs and
GPUs. A Tune callback asks the search's hooks for each starting trial's run (and hands the
trial its assignment through the channel) and tells them of each end; a stopper ends the
experiment once the search stops. Tune's and Ray's INFO lines stay out of the cell.

Ray is never shut down here and ``ray stop`` is never called. Tune writes its own state
under ``<search dir>/ray``.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ludwig_nb.engines.ray.tune.channel import TuneChannel, ray_get
from ludwig_nb.engines.ray.tune.schedulers import budget, graceful, scheduler
from ludwig_nb.engines.ray.tune.searchers import search_algorithm
from ludwig_nb.engines.ray.tune.space import domain
from ludwig_nb.engines.ray.tune.spec import NAMESPACE, register_hooks, unregister_hooks
from ludwig_nb.engines.ray.tune.trial import make_trainable
from ludwig_nb.engines.search_backend import TuneHooks, TuneSpec

__all__ = ["run_tune", "slots"]


def _callbacks(hooks: TuneHooks, actor: Any, channel: str) -> tuple[Any, Any]:
    """The driver's Tune callback (trial starts and ends) and stopper (the search's end)."""
    from ray.tune import Callback
    from ray.tune.stopper import Stopper

    class _Hooks(Callback):  # type: ignore[misc]
        def on_trial_start(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            try:
                assignment = hooks.start_trial(trial.trial_id, dict(trial.config), channel)
            except Exception as exc:  # the trial then ends at once, failed
                assignment = {"refused": f"{type(exc).__name__}: {exc}"}
            stop, pause = assignment.pop("control", None) or (None, None)
            if stop or pause:  # in the channel before the trial can read its assignment
                ray_get(actor.set_control.remote(trial.trial_id, stop, pause))
            ray_get(actor.assign.remote(trial.trial_id, assignment))

        def on_trial_complete(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            ray_get(actor.end.remote(trial.trial_id, None))
            hooks.trial_ended(trial.trial_id, None)

        def on_trial_error(self, iteration: int, trials: Any, trial: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            error = _trial_error(trial)
            ray_get(actor.end.remote(trial.trial_id, error))
            hooks.trial_ended(trial.trial_id, error)

        def on_step_end(self, iteration: int, trials: Any, **info: Any) -> None:  # noqa: ARG002 (Tune's names)
            hooks.tick()

    class _End(Stopper):  # type: ignore[misc]
        def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:  # noqa: ARG002 (Tune's names)
            return False

        def stop_all(self) -> bool:
            return bool(hooks.should_end())

    return _Hooks(), _End()


def _trial_error(trial: Any) -> str:
    """The last line of what Tune recorded for a failed trial."""
    path = getattr(trial, "error_file", None) or ""
    text = ""
    with contextlib.suppress(OSError):
        text = Path(path).read_text(encoding="utf-8") if path else ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "the trial's Ray actor failed"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Tune's and Ray's INFO lines stay out of the cell while the experiment runs."""
    loggers = [logging.getLogger(n) for n in ("ray.tune", "ray.train", "ray.air", "ray")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def slots(spec: TuneSpec, resources: dict[str, float]) -> int:
    """Trials that fit at once on a Ray with ``resources`` (its CPUs and GPUs over a trial's).

    The channel actor and the driver ask for no CPU, so every CPU goes to trials; capped
    by ``max_concurrent_trials`` when that is a number, and by the trials to run.
    """
    fits = [int(float(resources.get("CPU", 1)) // spec.cpus) if spec.cpus > 0 else spec.num_samples]
    if spec.gpus > 0:
        fits.append(int(float(resources.get("GPU", 0)) // spec.gpus))
    found = max(1, min(fits))
    return min(found, spec.max_concurrent) if spec.max_concurrent else found


def run_tune(spec: TuneSpec, hooks: TuneHooks) -> None:
    """Run the experiment until its trials are done or the search stops (blocks).

    Raises:
        RuntimeError: Ray or Tune failed to run the experiment (not a trial's failure:
            those end the trial as failed and the experiment goes on).
    """
    import ray
    from ray import tune

    import ludwig_nb
    from ludwig_nb.engines.ray.driver import ensure_ray, worker_runtime_env

    ensure_ray(None)
    at_once = slots(spec, ray.cluster_resources())
    hooks.set_slots(at_once)
    channel = f"tune-{spec.name}-{uuid.uuid4().hex[:8]}"
    ref: Any = register_hooks(channel, hooks)
    actor = (
        ray.remote(num_cpus=0)(TuneChannel)
        .options(
            name=channel, namespace=NAMESPACE, max_concurrency=64, runtime_env=worker_runtime_env()
        )
        .remote()
    )
    root = str(Path(ludwig_nb.__file__).resolve().parent.parent)
    trainable = tune.with_resources(
        tune.with_parameters(make_trainable(root, channel, spec.metric_path), dataset=spec.dataset),
        {"cpu": spec.cpus, "gpu": spec.gpus},
    )
    space = {name: domain(p) for name, p in spec.parameters.items()}
    callback, stopper = _callbacks(ref, actor, channel)
    num_samples = len(spec.grid) if spec.grid is not None else spec.num_samples
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(
            metric="metric",
            mode="min" if spec.goal == "minimize" else "max",
            search_alg=search_algorithm(spec, spec.max_concurrent or at_once),
            num_samples=num_samples,
            scheduler=graceful(scheduler(spec), ref, actor, budget(spec)),
        ),
        run_config=tune.RunConfig(
            name=f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}",
            storage_path=str((spec.directory / "ray").resolve()),
            verbose=0,
            callbacks=[callback],
            stop=stopper,
            log_to_file=True,
            failure_config=tune.FailureConfig(max_failures=0),
        ),
    )
    try:
        with _quiet():
            tuner.fit()
    finally:
        unregister_hooks(channel)
        with contextlib.suppress(Exception):
            ray.kill(actor)
