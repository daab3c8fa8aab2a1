"""``EventCallback``: Ludwig's public ``Callback`` hooks turned into our events and our control.

Imported only inside a run, after Ludwig (it subclasses ``ludwig.callbacks.Callback``). Every
hook runs in the run's thread (Ludwig calls them from ``LudwigModel.train``):

- the first ``on_epoch_start`` has the trainer's total steps and steps per epoch: RunStarted;
- ``on_batch_start`` is the step boundary: a stop sets ``trainer.total_steps`` to the steps
  done (Ludwig's loop ends after the batch; never its SIGINT handler, which it installs only
  on the main thread), a pause blocks here until resumed;
- ``on_batch_end``: StepFinished, with the batch's exact loss where the trainer exposes
  ``train_step`` (the loss is None otherwise);
- ``on_eval_start`` / ``on_eval_end``: EvaluationFinished with the progress tracker's metrics;
- ``on_checkpoint``: CheckpointSaved (Ludwig calls it after each evaluation and again at the
  epoch's end; one event per step).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from ludwig.callbacks import Callback

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.engines.base import Emit
from ludwig_nb.engines.ludwig.metrics import metrics_at
from ludwig_nb.engines.ludwig.schedule import final_steps_per_checkpoint, ludwig_schedule

__all__ = ["EventCallback"]


class EventCallback(Callback):  # type: ignore[misc]  # Ludwig is untyped
    """One run's bridge; see the module docstring.

    Args:
        emit: Where events go.
        control: The run's stop / pause control, honoured at step boundaries.
        clock: Wall-clock seconds for the events.
        run_id: The run's id.
        name: The run's name.
        evaluation_rows: Rows one evaluation covers (validation + test), for the ETA.
    """

    def __init__(
        self,
        emit: Emit,
        control: Control,
        clock: Callable[[], float],
        *,
        run_id: str,
        name: str,
        evaluation_rows: int = 0,
    ) -> None:
        self.emit, self.control, self.clock = emit, control, clock
        self.run_id, self.name = run_id, name
        self.evaluation_rows = evaluation_rows
        self.schedule: ev.ScheduleInfo | None = None
        self.metadata: Any = None
        self.stopped: str | None = None
        self.evaluations = 0
        self.best_step: int | None = None
        self._step_start = 0.0
        self._last_end = 0.0
        self._loss: float | None = None
        self._eval_start = 0.0
        self._improved = False
        self._evaluating = False
        self._checkpointed: set[int] = set()
        self.save_path = ""
        self.steps_done = 0
        self.tracker: Any = None  # Ludwig's ProgressTracker, once training started

    # -- before training ---------------------------------------------------------------
    def on_preprocess_start(self, config: Any, **kwargs: Any) -> None:
        """Ludwig starts preprocessing: emit the preprocessing phase."""
        self._phase("preprocessing", "Ludwig preprocessing")

    def on_preprocess_end(
        self, training_set: Any, validation_set: Any, test_set: Any, training_set_metadata: Any
    ) -> None:
        """Preprocessed: keep the metadata (a stop before the first evaluation needs it)."""
        self.metadata = training_set_metadata  # a stop before the first evaluation needs it
        self._phase("preprocessing", "building the model")

    def on_trainer_train_setup(self, trainer: Any, save_path: str, is_coordinator: bool) -> None:
        """The trainer is set up: shadow its ``train_step`` to see per-step losses."""
        self._wrap_train_step(trainer)

    def _wrap_train_step(self, trainer: Any) -> None:
        """Shadow ``trainer.train_step`` to see each batch's loss.

        Ludwig hands callbacks no per-step loss; without that method the steps carry no loss.
        """
        original = getattr(trainer, "train_step", None)
        if not callable(original):
            return

        def train_step(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            loss = result[0] if isinstance(result, tuple) and result else None
            try:
                self._loss = float(loss.detach()) if loss is not None else None
            except (AttributeError, TypeError, ValueError, RuntimeError):
                self._loss = None
            return result

        trainer.train_step = train_step

    # -- the schedule ------------------------------------------------------------------
    def on_epoch_start(self, trainer: Any, progress_tracker: Any, save_path: str) -> None:
        """An epoch starts: emit the run's start (or a schedule change) and honour the control."""
        self.save_path = str(save_path or "")
        self.tracker = progress_tracker
        schedule = self._schedule(trainer)
        if self.schedule is None:
            self.schedule = schedule
            self.emit(
                ev.RunStarted(
                    time=self.clock(),
                    run_id=self.run_id,
                    name=self.name,
                    engine="ludwig",
                    device=str(getattr(trainer, "device", "cpu")),
                    schedule=schedule,
                    start_step=int(progress_tracker.steps),
                    host=socket.gethostname(),
                    device_index=_gpu_index(getattr(trainer, "device", None)),
                )
            )
            self._phase("training")
        elif schedule.total_steps != self.schedule.total_steps and self.stopped is None:
            self.schedule = schedule
            self.emit(ev.ScheduleChanged(time=self.clock(), schedule=schedule, reason="Ludwig"))

    def _schedule(self, trainer: Any) -> ev.ScheduleInfo:
        total = int(trainer.total_steps)
        per_epoch = int(trainer.steps_per_epoch)
        every = final_steps_per_checkpoint(
            per_epoch,
            int(getattr(trainer, "steps_per_checkpoint", 0) or 0),
            float(getattr(trainer, "checkpoints_per_epoch", 0) or 0),
            total,
        )
        eval_size = int(getattr(trainer, "eval_batch_size", 0) or 0)
        batches = -(-self.evaluation_rows // eval_size) if eval_size > 0 else 0
        return ludwig_schedule(
            total_steps=total,
            steps_per_epoch=per_epoch,
            every=every,
            batch_size=int(trainer.batch_size),
            evaluation_batches=batches,
            evaluate=not getattr(trainer, "skip_all_evaluation", False),
            eval_batch_size=eval_size,
        )

    # -- steps ---------------------------------------------------------------------------
    def on_batch_start(self, trainer: Any, progress_tracker: Any, save_path: str) -> None:
        """A step starts: leave an evaluation phase and honour a stop or a pause."""
        done = int(progress_tracker.steps)
        if self._evaluating:
            self._evaluating = False
            self._phase("training")
        try:
            self.control.checkpoint()
            if self.control.paused:
                self._pause(done)
        except StopRequested as stop:
            self._stop(trainer, done, str(stop) or self.control.stop_reason)
        self._step_start = self.clock()

    def _pause(self, done: int) -> None:
        paused_at = self.clock()

        def on_pause(reason: str) -> None:
            self.emit(ev.Paused(time=paused_at, step=done, reason=reason))

        def on_resume(reason: str) -> None:
            self.emit(ev.Resumed(time=self.clock(), step=done, paused_at=paused_at, reason=reason))

        self.control.wait_while_paused(on_pause=on_pause, on_resume=on_resume)
        self.control.checkpoint()

    def _stop(self, trainer: Any, done: int, reason: str | None) -> None:
        if self.stopped is None:
            self.stopped = reason or "user"
            self._phase("stopping", _stop_text(self.stopped))
        trainer.total_steps = done  # Ludwig's loop ends once this batch is done

    def on_batch_end(
        self, trainer: Any, progress_tracker: Any, save_path: str, sync_step: bool = True
    ) -> None:
        """A step ended: emit ``StepFinished`` with its timing and loss."""
        steps = int(progress_tracker.steps)
        self.steps_done = steps
        per_epoch = max(1, int(trainer.steps_per_epoch))
        self._last_end = self.clock()
        self.emit(
            ev.StepFinished(
                time=self._last_end,
                step=steps - 1,
                epoch=(steps - 1) // per_epoch,
                start_time=self._step_start,
                batch_size=int(progress_tracker.batch_size),
                loss=self._loss,
                learning_rate=_number(progress_tracker.learning_rate),
            )
        )
        self._loss = None
        if self.control.stop_requested:  # end here, not after one more batch
            self._stop(trainer, steps, self.control.stop_reason)

    # -- evaluations and checkpoints ---------------------------------------------------
    def on_eval_start(self, trainer: Any, progress_tracker: Any, save_path: str) -> None:
        """An evaluation starts: emit the evaluating phase."""
        self._eval_start = self.clock()
        self._improved = False
        self._phase("evaluating")

    def on_save_best_checkpoint(self, trainer: Any, progress_tracker: Any, save_path: str) -> None:
        """Ludwig saved a new best checkpoint: the evaluation improved."""
        self._improved = True
        self.best_step = int(progress_tracker.steps)

    def on_eval_end(self, trainer: Any, progress_tracker: Any, save_path: str) -> None:
        """An evaluation ended: emit ``EvaluationFinished`` with Ludwig's metrics."""
        steps = int(progress_tracker.steps)
        per_epoch = max(1, int(trainer.steps_per_epoch))
        self.evaluations += 1
        self._last_end = self.clock()
        self.emit(
            ev.EvaluationFinished(
                time=self._last_end,
                step=steps - 1,
                epoch=(steps - 1) // per_epoch,
                start_time=self._eval_start,
                metrics=metrics_at(progress_tracker, steps),
                improved=self._improved,
            )
        )
        self._evaluating = True  # back to "training" at the next batch, after the checkpoint

    def on_checkpoint(self, trainer: Any, progress_tracker: Any) -> None:
        """Ludwig saved a checkpoint: emit ``CheckpointSaved`` once per step."""
        steps = int(progress_tracker.steps)
        if steps in self._checkpointed or steps == 0:
            return
        self._checkpointed.add(steps)
        path = f"{self.save_path}/training_checkpoints/latest.ckpt" if self.save_path else ""
        now = self.clock()
        self.emit(
            ev.CheckpointSaved(
                time=now,
                step=steps - 1,
                start_time=min(self._last_end or now, now),
                path=str(path),
                best=self._improved and self.best_step == steps,
            )
        )

    def _phase(self, phase: str, detail: str = "") -> None:
        self.emit(ev.PhaseChanged(time=self.clock(), phase=phase, detail=detail))


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _gpu_index(device: Any) -> int | None:
    if device is None or getattr(device, "type", str(device)[:4]) != "cuda":
        return None
    index = getattr(device, "index", None)
    return int(index) if index is not None else 0


def _stop_text(reason: str) -> str:
    if reason == "user":
        return "stopped by user"
    return reason if reason.startswith("stopped") else f"stopped: {reason}"
