"""The training loop of the built-in engine: events, control, evaluation, checkpoints.

One :class:`Training` per ``fit``. It emits every event of core/events.py through
``emit``, checks ``control`` at every step boundary, evaluates and
checkpoints where the plan says, stops early, and always leaves ``run_dir/model/`` and
``run_dir/training_statistics.json`` before ``RunFinished``. ``StopRequested`` ends the
run as "stopped"; any other exception propagates (the run layer reports it).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import CheckpointRequests, Control, StopRequested
from ludwig_nb.core.ludwig_results import evaluation_frequency
from ludwig_nb.engines.base import Emit, TrainJob
from ludwig_nb.engines.builtin.capture import StepCapture
from ludwig_nb.engines.builtin.checkpoint import BEST, LATEST, load_checkpoint, save_checkpoint
from ludwig_nb.engines.builtin.device import Batch, batch_order, prefetched
from ludwig_nb.engines.builtin.distributed import SINGLE, Distributed
from ludwig_nb.engines.builtin.evaluation import evaluate_split, finite_only
from ludwig_nb.engines.builtin.memory import MicroBatcher
from ludwig_nb.engines.builtin.metrics import DEFAULT_VALIDATION_METRIC, MINIMIZE, is_improvement
from ludwig_nb.engines.builtin.model_io import BuiltinModel
from ludwig_nb.engines.builtin.optim import clip_gradients, penalty
from ludwig_nb.engines.builtin.setup import Setup, build_setup
from ludwig_nb.store.rundir import write_json_atomic

__all__ = ["Training", "TrainingDiverged", "loss_sync_interval"]

log = logging.getLogger(__name__)


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


def _gpu_index(device: torch.device) -> int | None:
    """The GPU's index on this host (a bare "cuda" is the current one), None on CPU."""
    if device.type != "cuda":
        return None
    return device.index if device.index is not None else torch.cuda.current_device()


def _stop_reason(reason: str | None) -> str:
    if reason in (None, "user"):
        return "stopped by user"
    return reason if reason.startswith("stopped") else f"stopped: {reason}"


def loss_sync_interval(device: torch.device) -> float:
    """Seconds between reads of the per-step losses (one host sync per read).

    On CPU a read costs nothing, so every step; on a GPU about a display frame (the dashboard
    redraws at most 4 times a second), so that no step waits for the device.
    """
    return 0.0 if device.type == "cpu" else 0.25


@dataclasses.dataclass(frozen=True)
class _Done:
    """A finished step whose loss is still a tensor (on the device)."""

    step: int
    epoch: int
    start_time: float
    time: float
    rows: int
    learning_rate: float
    loss: torch.Tensor


class Training:
    """Runs one job; :meth:`run` returns the trained model.

    Args:
        job: The run's job (config, data, run directory, options).
        emit: Where events go.
        control: The run's stop / pause / pace control.
        engine: The engine's name, as the events report it.
        distributed: This process's rank of a data-parallel run (one rank by default).
    """

    def __init__(
        self,
        job: TrainJob,
        emit: Emit,
        control: Control,
        engine: str = "builtin",
        distributed: Distributed = SINGLE,
    ):
        self.job, self.emit, self.control = job, emit, control
        self.engine = engine
        self.distributed = distributed  # this process's rank of a data-parallel run
        self.clock = job.clock or time.time
        self.trainer: dict[str, Any] = dict(job.config.get("trainer") or {})
        self.timings = {
            "setup": 0.0,
            "data_wait": 0.0,
            "steps": 0.0,
            "events": 0.0,
            "evaluation": 0.0,
            "checkpoint": 0.0,
        }
        self.completed = 0  # steps finished so far
        self.running_loss: list[float] = []
        self.best: dict[str, Any] = {"value": None, "step": None, "metrics": {}, "stale": 0}
        self.best_weights: dict[str, torch.Tensor] | None = None
        # Ludwig's TrainingStats shape exactly: its loader refuses any other top-level key
        self.statistics: dict[str, Any] = {
            "training": {},
            "validation": {},
            "test": {},
            "evaluation_frequency": evaluation_frequency(self.trainer),
        }
        self.s: Setup
        self.last_checkpoint_step: int | None = None
        strength = float(self.trainer.get("regularization_lambda") or 0.0)
        kind = self.trainer.get("regularization_type")
        #: (type, lambda) when regularisation is on; None skips it at every step
        self.regularization = (kind, strength) if strength and kind else None
        self.clipping = self.trainer.get("gradient_clipping")
        self.capture = StepCapture(job.run_dir, 0, "cpu")  # replaced once the device is known
        #: runs each step's batch, split into micro-batches after a CUDA out-of-memory error
        self.memory = MicroBatcher.for_training(
            job.config, self._emit, self.clock, lambda: self.s.optimizer.zero_grad(True)
        )
        self.pending: list[_Done] = []  # steps whose loss is not read yet (see _flush)
        self.sync_interval = 0.0  # seconds; set from the device in run()
        self._lr: float | None = None  # the learning rate the optimizer holds

    # -- events ----------------------------------------------------------------------
    def _emit(self, event: ev.Event) -> None:
        began = time.perf_counter()
        self.emit(event)
        self.timings["events"] += time.perf_counter() - began

    def _phase(self, phase: str, detail: str = "") -> None:
        self._emit(ev.PhaseChanged(time=self.clock(), phase=phase, detail=detail))

    # -- the run ---------------------------------------------------------------------
    def run(self) -> BuiltinModel | None:
        """Train; None when stopped during preprocessing (no model exists yet)."""
        began = time.perf_counter()
        self._phase("preprocessing")
        setup = self._setup_or_stop()
        if setup is None:
            reason = _stop_reason(self.control.stop_reason)
            self._phase("stopping", reason)
            self._emit(ev.RunFinished(time=self.clock(), status="stopped", step=0, reason=reason))
            return None
        self.s = setup
        if self.s.resume is not None:
            self._restore(self.s.resume)
        self.s.step_module = self.distributed.wrap(self.s.step_module)  # DDP on >1 rank
        self.timings["setup"] = time.perf_counter() - began
        self.sync_interval = loss_sync_interval(self.s.device)
        self._emit(
            ev.RunStarted(
                time=self.clock(),
                run_id=self.job.run_id,
                name=self.job.name,
                engine=self.engine,
                device=str(self.s.device),
                schedule=self.s.plan.info(),
                start_step=self.completed,
                host=socket.gethostname(),
                device_index=_gpu_index(self.s.device),
            )
        )
        self._phase("training")
        status, reason = "completed", ""
        self.capture = StepCapture(self.job.run_dir, self.job.profile_steps, self.s.device)
        self.capture.start()
        try:
            reason = self._loop()
        except StopRequested as stop:
            self._flush()
            status, reason = "stopped", _stop_reason(str(stop) or self.control.stop_reason)
            self._phase("stopping", reason)
            self._checkpoint(max(0, self.completed - 1), best=False)
        finally:
            self.capture.close()  # a run shorter than the window still writes its trace
        return self._finish(status, reason)

    def _setup_or_stop(self, poll_s: float = 0.25) -> Setup | None:
        """Build the setup in a helper thread while polling for a stop.

        ``build_setup`` (preprocessing, model) in a helper thread while this one polls the control
        file and the stop flag every ``poll_s`` seconds: a stop during a long preprocessing lands
        within a second. None when stopped (the helper is abandoned; it only reads the dataset and
        finishes on its own). A rank of a data-parallel run sets up without polling: its control
        agrees with the other ranks in a collective, and ranks polling a different number of times
        would wait on each other forever.
        """
        world_size = self.distributed.world_size
        if world_size > 1:
            return build_setup(
                self.job, self.trainer, self._phase, world_size=world_size, progress=self._emit
            )
        out: dict[str, Any] = {}

        def work() -> None:
            try:
                out["setup"] = build_setup(
                    self.job,
                    self.trainer,
                    self._phase,
                    world_size=self.distributed.world_size,
                    progress=self._emit,
                )
            except BaseException as err:  # re-raised on the run's thread
                out["error"] = err

        helper = threading.Thread(
            target=work, name=f"ludwig_nb-setup-{self.job.run_id}", daemon=True
        )
        helper.start()
        while helper.is_alive():
            helper.join(poll_s)
            try:
                self.control.checkpoint()  # polls outside requests (the control file)
            except StopRequested:
                return None
        if "error" in out:
            raise out["error"]
        setup: Setup = out["setup"]
        return setup

    def _loop(self) -> str:
        plan, s = self.s.plan, self.s
        evaluations, checkpoints = set(plan.evaluations_after), set(plan.checkpoints_after)
        while self.completed < plan.total_steps:
            epoch = plan.epoch_of(self.completed)
            first = epoch * plan.steps_per_epoch
            count = min(plan.steps_per_epoch, plan.total_steps - first)
            order = self.distributed.shard(
                batch_order(s.train.rows, s.seed, epoch, self.trainer.get("should_shuffle", True))
            ).to(s.train.device)  # one copy per epoch, not one per batch
            size = plan.batch_size
            batches = prefetched(
                self._batch_maker(order, size), count, s.device, start=self.completed - first
            )
            for _ in range(self.completed - first, count):
                step = self.completed
                self._boundary()
                self._step(step, epoch, batches)
                if self.capture.active:
                    self.capture.step_finished()
                if step in evaluations and self._evaluate(step, step in checkpoints):
                    self.s.plan = plan.ending_after(step)
                    self._emit(
                        ev.ScheduleChanged(
                            time=self.clock(), schedule=self.s.plan.info(), reason="early stopping"
                        )
                    )
                    return "early stopping"
                if step in checkpoints and step not in evaluations:
                    self._checkpoint(step, best=False)
        return ""

    def _checkpoint_if_asked(self) -> None:
        """Save a resumable checkpoint now when the control asks (a deadline is near)."""
        control = self.control
        asked = isinstance(control, CheckpointRequests) and control.take_checkpoint_request()
        if asked and self.completed > 0 and self.last_checkpoint_step != self.completed - 1:
            self._checkpoint(self.completed - 1, best=False)

    def _batch_maker(self, order: torch.Tensor, size: int) -> Callable[[int], Batch]:
        train = self.s.train
        return lambda i: train.gather(order[i * size : (i + 1) * size])

    def _boundary(self) -> None:
        """Do what a step boundary owes the control: pace, stop, pause.

        Idle for the throttle's duty cycle, honour a stop (the control polls outside requests), wait
        out a pause.
        """
        self.control.pace()
        self.control.checkpoint()
        self._checkpoint_if_asked()
        if not self.control.paused:
            return
        self._flush()  # the steps before a pause are shown while it lasts
        paused_at = self.clock()

        def on_pause(reason: str) -> None:
            self._emit(ev.Paused(time=paused_at, step=self.completed, reason=reason))

        def on_resume(reason: str) -> None:
            self._emit(
                ev.Resumed(
                    time=self.clock(), step=self.completed, paused_at=paused_at, reason=reason
                )
            )

        self.control.wait_while_paused(on_pause=on_pause, on_resume=on_resume)
        self.control.checkpoint()

    # -- one step --------------------------------------------------------------------
    def _step(self, step: int, epoch: int, batches: Any) -> None:
        s = self.s
        start_time, began = self.clock(), time.perf_counter()
        _, batch = next(batches)
        fetched = time.perf_counter()
        lr = s.lr.at(step)
        if lr != self._lr:
            for group in s.optimizer.param_groups:
                group["lr"] = lr
            self._lr = lr
        accumulate = self.s.accumulate
        sync = (step + 1) % accumulate == 0 or step + 1 == s.plan.total_steps
        # a tensor: read with the others in _flush (one host sync per display frame)
        loss = self.memory.run(step, batch, accumulate, sync, self._forward_backward)
        self.completed = step + 1
        rows = int(next(iter(batch.values()))[0].shape[0])
        done = time.perf_counter()
        self.timings["data_wait"] += fetched - began
        self.timings["steps"] += done - began
        self.pending.append(_Done(step, epoch, start_time, self.clock(), rows, lr, loss))
        if self.pending[-1].time - self.pending[0].start_time >= self.sync_interval:
            self._flush()

    def _flush(self) -> None:
        """Read the pending losses (one host sync), check them, emit their StepFinished.

        Raises :class:`TrainingDiverged` at the first NaN or infinite loss.
        """
        if not self.pending:
            return
        done, self.pending = self.pending, []
        if len(done) == 1:
            values = [float(done[0].loss)]
        else:
            values = torch.stack([d.loss for d in done]).tolist()
        for entry, loss in zip(done, values, strict=True):
            if not math.isfinite(loss):
                self.completed = entry.step
                raise TrainingDiverged(self._diverged_message(loss, entry.step))
            self.running_loss.append(loss)
            self._emit(
                ev.StepFinished(
                    time=entry.time,
                    step=entry.step,
                    epoch=entry.epoch,
                    start_time=entry.start_time,
                    batch_size=entry.rows,
                    loss=loss,
                    learning_rate=entry.learning_rate,
                )
            )

    def _forward_backward(self, batch: Batch, accumulate: float, sync: bool) -> torch.Tensor:
        s = self.s
        with s.precision.autocast():
            outputs = s.step_module(batch)
        loss, _ = s.objective(outputs, batch)
        if self.regularization:
            extra = penalty(s.module, *self.regularization)
            loss = loss if extra is None else loss + extra
        scaled = loss / accumulate if accumulate > 1 else loss
        scaler = s.precision.scaler
        (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if sync:
            if scaler is not None:
                scaler.unscale_(s.optimizer)
            clip_gradients(s.trainable, self.clipping)
            if scaler is not None:
                scaler.step(s.optimizer)
                scaler.update()
            else:
                s.optimizer.step()
            s.optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    def _diverged_message(self, loss: float, step: int) -> str:
        latest = self.s.checkpoints / "latest.ckpt"
        if not latest.is_file() and self.job.resume_from is not None:  # none saved since
            latest = Path(self.job.resume_from) / "checkpoints" / "latest.ckpt"
        saved = self.last_checkpoint_step
        kept = (
            f"the last good checkpoint, after step {saved}, is {latest}"
            if saved is not None and latest.is_file()
            else "no checkpoint was saved yet"
        )
        return f"loss became {loss} at step {step}; training stopped ({kept})"

    # -- evaluation ------------------------------------------------------------------
    def _evaluate(self, step: int, checkpoint: bool) -> bool:
        """Evaluate, record, checkpoint; True when early stopping ends the run."""
        s = self.s
        self._flush()
        self._phase("evaluating")
        start_time, began = self.clock(), time.perf_counter()
        metrics: dict[str, dict[str, dict[str, float]]] = {"training": self._training_metrics()}
        for split in ("validation", "test"):
            if split in s.splits:
                metrics[split] = evaluate_split(
                    s.module,
                    s.objective,
                    s.splits[split],
                    self.job.config,
                    s.metadata,
                    s.eval_batch_size,
                    s.precision,
                )
        self._record(metrics)
        improved = self._track_best(step, metrics)
        self.timings["evaluation"] += time.perf_counter() - began
        self._emit(
            ev.EvaluationFinished(
                time=self.clock(),
                step=step,
                epoch=s.plan.epoch_of(step),
                start_time=start_time,
                metrics=finite_only(metrics),
                improved=improved,
            )
        )
        if checkpoint:
            self._checkpoint(step, best=improved)
        self._phase("training")
        patience = int(
            self.trainer.get("early_stop", 5) if self.trainer.get("early_stop") is not None else 5
        )
        return "validation" in s.splits and patience > 0 and self.best["stale"] >= patience

    def _training_metrics(self) -> dict[str, dict[str, float]]:
        s = self.s
        if self.trainer.get("evaluate_training_set"):
            return evaluate_split(
                s.module,
                s.objective,
                s.train,
                self.job.config,
                s.metadata,
                s.eval_batch_size,
                s.precision,
            )
        mean = sum(self.running_loss) / max(1, len(self.running_loss))
        self.running_loss = []
        out = {"combined": {"loss": mean}}
        if len(self.job.config["output_features"]) == 1:
            out[self.job.config["output_features"][0]["name"]] = {"loss": mean}
        return out

    def _record(self, metrics: dict[str, dict[str, dict[str, float]]]) -> None:
        for split, per_feature in metrics.items():
            table = self.statistics[split]
            for feature, values in per_feature.items():
                for metric, value in values.items():
                    series = table.setdefault(feature, {}).setdefault(metric, [])
                    series.append(None if math.isnan(value) else value)

    def _validation_target(self) -> tuple[str, str]:
        outputs = self.job.config["output_features"]
        field = self.trainer.get("validation_field") or outputs[0]["name"]
        default = "loss"
        for feature in outputs:
            if feature["name"] == field:
                default = DEFAULT_VALIDATION_METRIC.get(feature["type"], "loss")
        return field, self.trainer.get("validation_metric") or default

    def _track_best(self, step: int, metrics: dict[str, dict[str, dict[str, float]]]) -> bool:
        split = "validation" if "validation" in metrics else "training"
        field, metric = self._validation_target()
        value = metrics[split].get(field, {}).get(metric)
        if value is None:
            value = metrics[split].get("combined", {}).get("loss", math.nan)
            metric = "loss"
        plateau = self.trainer.get("learning_rate_scheduler") or {}
        plateau_split = plateau.get("reduce_eval_split", "training")
        plateau_metric = plateau.get("reduce_eval_metric", "loss")
        plateau_value = metrics.get(plateau_split, {}).get("combined", {}).get(plateau_metric)
        if plateau_value is not None:
            self.s.lr.observe(plateau_value, plateau_metric in MINIMIZE)
        if not is_improvement(metric, value, self.best["value"]):
            self.best["stale"] += 1
            return False
        self.best.update(value=value, step=step, metrics=finite_only(metrics), stale=0)
        self.best_weights = {k: v.detach().clone() for k, v in self.s.module.state_dict().items()}
        return True

    # -- checkpoints and the end -----------------------------------------------------
    def _state(self, step: int) -> dict[str, Any]:
        """What a checkpoint holds after ``step`` (0-based), see checkpoint.py."""
        s = self.s
        scaler = s.precision.scaler
        return {
            "format": 1,
            "step": self.completed,
            "last_step": step,
            "epoch": s.plan.epoch_of(step),
            "batch_size": s.plan.batch_size,
            "model": s.module.state_dict(),
            "optimizer": s.optimizer.state_dict(),
            "scaler": scaler.state_dict() if scaler is not None else None,
            "lr": s.lr.state_dict(),
            "rng": s.generator.get_state() if s.generator is not None else torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "best": json.dumps(self.best),
            "running_loss": list(self.running_loss),
            "statistics": json.dumps(self.statistics),
            "metadata": json.dumps(s.metadata),
            "micro_batches": self.memory.parts,  # an out-of-memory split survives a resume
        }

    def _checkpoint(self, step: int, best: bool) -> None:
        self._flush()
        start_time, began = self.clock(), time.perf_counter()
        state = self._state(step)
        path = save_checkpoint(self.s.checkpoints / LATEST, state)
        self.last_checkpoint_step = step
        if best:
            save_checkpoint(self.s.checkpoints / BEST, state)
        self.timings["checkpoint"] += time.perf_counter() - began
        self._emit(
            ev.CheckpointSaved(
                time=self.clock(), step=step, start_time=start_time, path=str(path), best=best
            )
        )

    def _restore(self, state: dict[str, Any]) -> None:
        """Continue from ``state``: weights, optimizer, scaler, learning rate, RNG, counters."""
        s = self.s
        s.module.load_state_dict(state["model"])
        s.optimizer.load_state_dict(state["optimizer"])
        if state.get("scaler") is not None and s.precision.scaler is not None:
            s.precision.scaler.load_state_dict(state["scaler"])
        s.lr.load_state_dict(state["lr"])
        if s.generator is None:
            torch.set_rng_state(state["rng"])
        else:
            try:
                s.generator.set_state(state["rng"])
            except (RuntimeError, TypeError):  # a state of another device's generator
                log.warning("checkpoint RNG state does not fit this device; dropout reseeded")
        if state.get("cuda_rng") and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.completed = int(state["step"])
        self.last_checkpoint_step = int(state["last_step"])
        self.best = json.loads(state["best"])
        self.running_loss = list(state.get("running_loss", []))
        statistics = json.loads(state["statistics"])
        statistics.pop("evaluation_steps", None)  # checkpoints from before Ludwig's exact shape
        self.statistics = {**self.statistics, **statistics}
        self.memory.parts = int(state.get("micro_batches", 1))
        best_file = s.checkpoints / BEST
        if best_file.is_file():
            self.best_weights = load_checkpoint(best_file)["model"]
            for key, value in self.best_weights.items():
                self.best_weights[key] = value.to(s.device)
        log.info("resumed at step %d", self.completed)

    def _finish(self, status: str, reason: str) -> BuiltinModel:
        s = self.s
        self._flush()
        if self.best_weights is not None:
            s.module.load_state_dict(self.best_weights)
        model = BuiltinModel(self.job.config, s.metadata, s.module, self.timings)
        model.save(self.job.run_dir / "model")
        write_json_atomic(self.job.run_dir / "training_statistics.json", self.statistics)
        self._emit(
            ev.RunFinished(
                time=self.clock(),
                status=status,
                step=self.completed,
                reason=reason,
                best_metrics=self.best["metrics"],
            )
        )
        return model
