"""The notebook's side of a Tune trial: the engine of its mirror run.

Each Tune trial is an ordinary :class:`~ludwig_nb.runs.run.Run` in the notebook (its run
directory, events, ETA, GPU watch) whose engine, :class:`TuneTrialEngine`, feeds it the
trial's events from the channel and forwards its Stop/Pause to the trial.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.engines.base import Emit, Engine, TrainJob
from ludwig_nb.engines.devices import DeviceFacts, TorchDeviceFacts
from ludwig_nb.engines.ray.tune.spec import NAMESPACE, TuneTrialFailed
from ludwig_nb.engines.ray.tune.storage import bring_home, point_home, trial_folder

__all__ = ["POLL_S", "TuneTrialEngine"]

POLL_S = 0.25  # seconds one long-poll of the channel waits


class TuneTrialEngine(Engine):
    """The engine of a trial's mirror run in the notebook.

    ``fit`` feeds the trial's events from the channel into the run and forwards the run's
    Stop/Pause to the trial.

    Args:
        channel: The name of the search's channel actor.
        tune_id: The Tune trial id.
        poll_s: Seconds one long-poll waits.
        storage: The search's storage path: the trial writes its run folder under it
            (see storage.py) and its model, statistics and log are copied home at the end;
            None: the trial writes the run directory itself.
    """

    name = "ray"

    def __init__(
        self, channel: str, tune_id: str, poll_s: float = POLL_S, storage: Path | None = None
    ) -> None:
        self.channel, self.tune_id, self.poll_s = channel, tune_id, poll_s
        self.storage = storage

    def check(self, config: Any) -> None:
        """The built-in engine's check: a trial trains the built-in loop."""
        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        BuiltinEngine().check(config)

    def prepare_data(self, config: Any, dataset: Any) -> Any:
        """The search checked the dataset once; the trial gets it through Ray."""
        del config
        return dataset

    def plan(self, config: Any, rows: int) -> ev.ScheduleInfo:
        """The built-in engine's plan."""
        from ludwig_nb.engines.builtin.engine import BuiltinEngine

        return BuiltinEngine().plan(config, rows)

    def warm_up(self) -> None:
        """Nothing to warm here: the trial trains in its Tune actor."""

    def devices(self) -> DeviceFacts:
        """Torch's facts in this process (the trial's GPU is its actor's)."""
        return TorchDeviceFacts()

    def fit(self, job: TrainJob, emit: Emit, control: Control) -> Any:
        """Mirror the trial until it ends; returns its model (None when it saved none).

        Raises:
            TuneTrialFailed: the trial raised, or its actor died before it finished.
            OSError: the trial's results could not be copied home from the storage.
        """
        import ray

        actor = ray.get_actor(self.channel, namespace=NAMESPACE)
        run_dir = Path(job.run_dir)
        folder = trial_folder(self.storage, run_dir, job.run_id)
        point_home(run_dir, folder)
        try:
            finished, error = self._mirror(actor, job, emit, control)
        except BaseException:
            with contextlib.suppress(OSError):  # the failed trial's log, at least
                bring_home(folder, run_dir)
            raise
        bring_home(folder, run_dir)
        if error and not finished:
            raise TuneTrialFailed(f"trial {job.name} ended in Ray Tune before it finished: {error}")
        return self._model(run_dir)

    def _mirror(
        self, actor: Any, job: TrainJob, emit: Emit, control: Control
    ) -> tuple[bool, str | None]:
        """Forward events and control until the trial ends: (whether it finished, error).

        Raises:
            TuneTrialFailed: the trial reported a failure.
        """
        import ray

        cursor, finished = 0, False
        sent: tuple[str | None, str | None] = (None, None)
        while True:
            with contextlib.suppress(StopRequested):
                control.checkpoint()  # reads the run's control file (the sidebar)
            wanted = (
                control.stop_reason if control.stop_requested else None,
                "user" if control.paused else None,
            )
            if wanted != sent:
                actor.set_control.remote(self.tune_id, *wanted)
                sent = wanted
            batch, cursor, ended, error = ray.get(
                actor.poll.remote(self.tune_id, cursor, self.poll_s)
            )
            for event in batch:
                finished = finished or isinstance(event, ev.RunFinished | ev.RunFailed)
                if isinstance(event, ev.RunFailed):
                    raise TuneTrialFailed(f"trial {job.name}: {event.error_type}: {event.message}")
                emit(event)
            if ended and not batch:
                return finished, error

    @staticmethod
    def _model(run_dir: Path) -> Any:
        from ludwig_nb.engines.builtin.model_io import load_model

        folder = run_dir / "model"
        return load_model(folder) if folder.is_dir() else None

    def load(self, folder: Path, manifest: Any) -> Any:
        """Trials save built-in models."""
        from ludwig_nb.engines.builtin.model_io import load_model

        return load_model(folder / str(manifest.get("path") or "."))
