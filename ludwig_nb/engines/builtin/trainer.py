"""The training loop of the built-in engine: events, control, evaluation, checkpoints.

One :class:`Training` per ``fit``. It emits every event of core/events.py through
``emit``, checks ``control`` at every step boundary, evaluates and
checkpoints where the plan says, stops early, and always leaves ``run_dir/model/`` and
``run_dir/training_statistics.json`` before ``RunFinished``. ``StopRequested`` ends the
run as "stopped"; any other exception propagates (the run layer reports it).
"""

from __future__ import annotations

import logging
import math
import socket
import time
from collections.abc import Callable
from typing import Any

import torch

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.core.rundir import write_json_atomic
from ludwig_nb.engines.base import Emit, TrainJob
from ludwig_nb.engines.builtin.device import Batch, batch_order, prefetched
from ludwig_nb.engines.builtin.distributed import SINGLE, Distributed
from ludwig_nb.engines.builtin.evaluation import evaluate_split, finite_only
from ludwig_nb.engines.builtin.metrics import DEFAULT_VALIDATION_METRIC, MINIMIZE, is_improvement
from ludwig_nb.engines.builtin.model_io import BuiltinModel
from ludwig_nb.engines.builtin.optim import clip_gradients, penalty
from ludwig_nb.engines.builtin.setup import Setup, build_setup

__all__ = ["Training", "TrainingDiverged"]

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


class Training:
    """Runs one job; :meth:`run` returns the trained model."""

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
        self.timings = {"setup": 0.0, "data_wait": 0.0, "steps": 0.0, "events": 0.0,
                        "evaluation": 0.0, "checkpoint": 0.0}  # fmt: skip
        self.completed = 0  # steps finished so far
        self.running_loss: list[float] = []
        self.best: dict[str, Any] = {"value": None, "step": None, "metrics": {}, "stale": 0}
        self.best_weights: dict[str, torch.Tensor] | None = None
        self.statistics: dict[str, Any] = {"training": {}, "validation": {}, "test": {},
                                           "evaluation_steps": []}  # fmt: skip
        self.s: Setup
        self.last_checkpoint_step: int | None = None
        strength = float(self.trainer.get("regularization_lambda") or 0.0)
        kind = self.trainer.get("regularization_type")
        #: (type, lambda) when regularisation is on; None skips it at every step
        self.regularization = (kind, strength) if strength and kind else None
        self.clipping = self.trainer.get("gradient_clipping")

    # -- events ----------------------------------------------------------------------
    def _emit(self, event: ev.Event) -> None:
        began = time.perf_counter()
        self.emit(event)
        self.timings["events"] += time.perf_counter() - began

    def _phase(self, phase: str, detail: str = "") -> None:
        self._emit(ev.PhaseChanged(time=self.clock(), phase=phase, detail=detail))

    # -- the run ---------------------------------------------------------------------
    def run(self) -> BuiltinModel:
        began = time.perf_counter()
        self._phase("preprocessing")
        self.s = build_setup(self.job, self.trainer, world_size=self.distributed.world_size)
        if self.s.resume is not None:
            self._restore(self.s.resume)
        self.s.step_module = self.distributed.wrap(self.s.step_module)  # DDP on >1 rank
        self.timings["setup"] = time.perf_counter() - began
        self._emit(
            ev.RunStarted(
                time=self.clock(), run_id=self.job.run_id, name=self.job.name, engine=self.engine,
                device=str(self.s.device), schedule=self.s.plan.info(), start_step=self.completed,
                host=socket.gethostname(), device_index=_gpu_index(self.s.device),
            )
        )  # fmt: skip
        self._phase("training")
        status, reason = "completed", ""
        try:
            reason = self._loop()
        except StopRequested as stop:
            status, reason = "stopped", _stop_reason(str(stop) or self.control.stop_reason)
            self._phase("stopping", reason)
            self._checkpoint(max(0, self.completed - 1), best=False)
        return self._finish(status, reason)

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
            batches = prefetched(self._batch_maker(order, size), count, s.device,
                                 start=self.completed - first)  # fmt: skip
            for _ in range(self.completed - first, count):
                step = self.completed
                self._boundary()
                self._step(step, epoch, batches)
                if step in evaluations and self._evaluate(step, step in checkpoints):
                    self.s.plan = plan.ending_after(step)
                    self._emit(ev.ScheduleChanged(time=self.clock(), schedule=self.s.plan.info(),
                                                  reason="early stopping"))  # fmt: skip
                    return "early stopping"
                if step in checkpoints and step not in evaluations:
                    self._checkpoint(step, best=False)
        return ""

    def _batch_maker(self, order: torch.Tensor, size: int) -> Callable[[int], Batch]:
        train = self.s.train
        return lambda i: train.gather(order[i * size : (i + 1) * size])

    def _boundary(self) -> None:
        """Honour a stop (the control polls outside requests), wait out a pause."""
        self.control.checkpoint()
        if not self.control.paused:
            return
        paused_at = self.clock()

        def on_pause(reason: str) -> None:
            self._emit(ev.Paused(time=paused_at, step=self.completed, reason=reason))

        def on_resume(reason: str) -> None:
            self._emit(ev.Resumed(time=self.clock(), step=self.completed, paused_at=paused_at,
                                  reason=reason))  # fmt: skip

        self.control.wait_while_paused(on_pause=on_pause, on_resume=on_resume)
        self.control.checkpoint()

    # -- one step --------------------------------------------------------------------
    def _step(self, step: int, epoch: int, batches: Any) -> None:
        s = self.s
        start_time, began = self.clock(), time.perf_counter()
        _, batch = next(batches)
        fetched = time.perf_counter()
        lr = s.lr.at(step)
        for group in s.optimizer.param_groups:
            group["lr"] = lr
        accumulate = self.s.accumulate
        sync = (step + 1) % accumulate == 0 or step + 1 == s.plan.total_steps
        loss = self._forward_backward(batch, accumulate, sync)
        if not math.isfinite(loss):
            raise TrainingDiverged(self._diverged_message(loss, step))
        self.completed = step + 1
        self.running_loss.append(loss)
        rows = int(next(iter(batch.values()))[0].shape[0])
        done = time.perf_counter()
        self.timings["data_wait"] += fetched - began
        self.timings["steps"] += done - began
        self._emit(ev.StepFinished(time=self.clock(), step=step, epoch=epoch, start_time=start_time,
                                   batch_size=rows, loss=loss, learning_rate=lr))  # fmt: skip

    def _forward_backward(self, batch: Batch, accumulate: int, sync: bool) -> float:
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
        return float(loss.detach())

    def _diverged_message(self, loss: float, step: int) -> str:
        latest = self.s.checkpoints / "latest.ckpt"
        saved = self.last_checkpoint_step
        kept = (
            f"the last good checkpoint, after step {saved}, is {latest}"
            if saved is not None
            else "no checkpoint was saved yet"
        )
        return f"loss became {loss} at step {step}; training stopped ({kept})"

    # -- evaluation ------------------------------------------------------------------
    def _evaluate(self, step: int, checkpoint: bool) -> bool:
        """Evaluate, record, checkpoint; True when early stopping ends the run."""
        s = self.s
        self._phase("evaluating")
        start_time, began = self.clock(), time.perf_counter()
        metrics: dict[str, dict[str, dict[str, float]]] = {"training": self._training_metrics()}
        for split in ("validation", "test"):
            if split in s.splits:
                metrics[split] = evaluate_split(s.module, s.objective, s.splits[split],
                                                self.job.config, s.metadata, s.eval_batch_size,
                                                s.precision)  # fmt: skip
        self._record(step, metrics)
        improved = self._track_best(step, metrics)
        self.timings["evaluation"] += time.perf_counter() - began
        self._emit(ev.EvaluationFinished(time=self.clock(), step=step, epoch=s.plan.epoch_of(step),
                                         start_time=start_time, metrics=finite_only(metrics),
                                         improved=improved))  # fmt: skip
        if checkpoint:
            self._checkpoint(step, best=improved)
        self._phase("training")
        patience = int(self.trainer.get("early_stop", 5) if self.trainer.get("early_stop")
                       is not None else 5)  # fmt: skip
        return "validation" in s.splits and patience > 0 and self.best["stale"] >= patience

    def _training_metrics(self) -> dict[str, dict[str, float]]:
        s = self.s
        if self.trainer.get("evaluate_training_set"):
            return evaluate_split(s.module, s.objective, s.train, self.job.config, s.metadata,
                                  s.eval_batch_size, s.precision)  # fmt: skip
        mean = sum(self.running_loss) / max(1, len(self.running_loss))
        self.running_loss = []
        out = {"combined": {"loss": mean}}
        if len(self.job.config["output_features"]) == 1:
            out[self.job.config["output_features"][0]["name"]] = {"loss": mean}
        return out

    def _record(self, step: int, metrics: dict[str, dict[str, dict[str, float]]]) -> None:
        self.statistics["evaluation_steps"].append(step)
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
        from ludwig_nb.engines.builtin.setup import checkpoint_state

        return checkpoint_state(self, step)

    def _checkpoint(self, step: int, best: bool) -> None:
        from ludwig_nb.engines.builtin.checkpoint import BEST, LATEST, save_checkpoint

        start_time, began = self.clock(), time.perf_counter()
        state = self._state(step)
        path = save_checkpoint(self.s.checkpoints / LATEST, state)
        self.last_checkpoint_step = step
        if best:
            save_checkpoint(self.s.checkpoints / BEST, state)
        self.timings["checkpoint"] += time.perf_counter() - began
        self._emit(ev.CheckpointSaved(time=self.clock(), step=step, start_time=start_time,
                                      path=str(path), best=best))  # fmt: skip

    def _restore(self, state: dict[str, Any]) -> None:
        from ludwig_nb.engines.builtin.setup import restore_state

        restore_state(self, state)

    def _finish(self, status: str, reason: str) -> BuiltinModel:
        s = self.s
        if self.best_weights is not None:
            s.module.load_state_dict(self.best_weights)
        model = BuiltinModel(self.job.config, s.metadata, s.module, self.timings)
        model.save(self.job.run_dir / "model")
        write_json_atomic(self.job.run_dir / "training_statistics.json", self.statistics)
        self._emit(ev.RunFinished(time=self.clock(), status=status, step=self.completed,
                                  reason=reason, best_metrics=self.best["metrics"]))  # fmt: skip
        return model
