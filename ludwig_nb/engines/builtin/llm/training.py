"""One LLM fine-tuning run of the built-in engine: events, control, evaluation, checkpoints.

The same contract as the ECD trainer (engines/builtin/trainer.py): every event of
core/events.py through ``emit``, ``control`` checked at every step boundary (pace, stop,
pause), evaluations and checkpoints where the plan says, early stopping, and always
``run_dir/model/`` and ``training_statistics.json`` before ``RunFinished``. On top: the
model's parameters (``ModelDescribed``), the data's token lengths (``TokensCounted``), each
epoch's per-step padded tokens (``EpochPlanned``), each step's tokens (``StepFinished``),
generated answers at each evaluation (``SamplesGenerated``). Checkpoints hold the trainable
weights only (an adapter's, not the base model's). ``profile_steps=N`` records N training
steps with torch.profiler, as for ECD (engines/builtin/capture.py).
"""

from __future__ import annotations

import json
import logging
import math
import socket
import time
from pathlib import Path
from typing import Any

import torch

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control, StopRequested
from ludwig_nb.core.ludwig_results import evaluation_frequency
from ludwig_nb.engines.base import Emit, TrainJob, job_seed
from ludwig_nb.engines.builtin.capture import StepCapture
from ludwig_nb.engines.builtin.checkpoint import BEST, LATEST, load_checkpoint, save_checkpoint
from ludwig_nb.engines.builtin.device import Precision, batch_order, resolve_device
from ludwig_nb.engines.builtin.llm import loading
from ludwig_nb.engines.builtin.llm.data import SplitText, split_frames, texts
from ludwig_nb.engines.builtin.llm.evaluation import evaluate_encoded
from ludwig_nb.engines.builtin.llm.footprint import estimate_for_run
from ludwig_nb.engines.builtin.llm.generation import generate, generation_config
from ludwig_nb.engines.builtin.llm.memory import StepRunner, auto_batch_size
from ludwig_nb.engines.builtin.llm.model_io import LlmModel, base_fingerprint
from ludwig_nb.engines.builtin.llm.tokens import Encoded, collate, padded_tokens
from ludwig_nb.engines.builtin.memory import oom_recovery_enabled
from ludwig_nb.engines.builtin.optim import build_optimizer, clip_gradients, penalty
from ludwig_nb.engines.builtin.schedule import LearningRate, Plan, plan_training
from ludwig_nb.store.rundir import write_json_atomic

__all__ = ["SAMPLES_SHOWN", "LlmTraining"]

log = logging.getLogger(__name__)

#: generated answers shown at each evaluation (Ludwig's MAX_EVALUATION_EXAMPLES_SHOWN)
SAMPLES_SHOWN = 5


class LlmTraining:
    """Runs one LLM job; :meth:`run` returns the trained model (None if stopped first)."""

    def __init__(self, job: TrainJob, emit: Emit, control: Control, engine: str = "builtin"):
        self.job, self.emit, self.control, self.engine = job, emit, control, engine
        self.clock = job.clock or time.time
        self.config = job.config
        self.trainer: dict[str, Any] = dict(job.config.get("trainer") or {})
        self.seed = job_seed(job)
        self.completed = 0
        self.running_loss: list[float] = []
        self.best: dict[str, Any] = {"value": None, "step": None, "metrics": {}, "stale": 0}
        self.best_weights: dict[str, torch.Tensor] | None = None
        self.statistics: dict[str, Any] = {
            "training": {},
            "validation": {},
            "test": {},
            "evaluation_frequency": evaluation_frequency(self.trainer),
        }
        self.timings = {"setup": 0.0, "steps": 0.0, "evaluation": 0.0, "checkpoint": 0.0}
        self.splits: dict[str, SplitText] = {}
        self.checkpoints = Path(job.run_dir) / "checkpoints"
        self.finetune = self.trainer.get("type", "finetune") != "none"
        self.gradient_checkpointing = bool(self.trainer.get("enable_gradient_checkpointing"))
        self.capture = StepCapture(self.checkpoints.parent, 0, "cpu")  # set once on a device
        self.runner = StepRunner(
            oom_recovery_enabled(job.config),
            self._oom_changed,
            self._zero_grad,
            self._checkpoint_on,
        )

    # -- events ----------------------------------------------------------------------
    def _phase(self, phase: str, detail: str = "") -> None:
        self.emit(ev.PhaseChanged(time=self.clock(), phase=phase, detail=detail))

    def _oom_changed(self, step: int, rows: int, micro: int, parts: int, message: str) -> None:
        self.emit(
            ev.OomRecovered(
                time=self.clock(),
                step=step,
                batch_size=rows,
                micro_batch_size=micro,
                accumulation=parts,
                message=message,
            )
        )

    # -- the run ---------------------------------------------------------------------
    def run(self) -> LlmModel | None:
        """Train (or, for ``trainer.type: none``, evaluate); returns the model."""
        began = time.perf_counter()
        self._phase("preprocessing", "splitting and tokenizing")
        try:
            self._setup()
        except StopRequested as stop:
            reason = str(stop) or self.control.stop_reason or "stopped by user"
            self.emit(ev.RunFinished(time=self.clock(), status="stopped", step=0, reason=reason))
            return None
        self.timings["setup"] = time.perf_counter() - began
        self.emit(
            ev.RunStarted(
                time=self.clock(),
                run_id=self.job.run_id,
                name=self.job.name,
                engine=self.engine,
                device=str(self.device),
                schedule=self.plan.info(),
                start_step=self.completed,
                host=socket.gethostname(),
                device_index=_gpu_index(self.device),
            )
        )
        status, reason = "completed", ""
        steps = self.job.profile_steps if self.finetune else 0  # zero-shot has no steps
        self.capture = StepCapture(Path(self.job.run_dir), steps, self.device)
        self.capture.start()
        try:
            if self.finetune:
                self._phase("training")
                reason = self._loop()
            else:
                self._evaluate(0, checkpoint=False)
        except StopRequested as stop:
            status = "stopped"
            reason = str(stop) or self.control.stop_reason or "stopped by user"
            self._phase("stopping", reason)
            if self.finetune:
                self._checkpoint(max(0, self.completed - 1), best=False)
        finally:
            self.capture.close()  # a run shorter than the window still writes its trace
        return self._finish(status, reason)

    # -- setup -------------------------------------------------------------------------
    def _setup(self) -> None:
        from ludwig_nb.data import load_dataset
        from ludwig_nb.engines.hub import check_base_model, fetch_base_model

        self.device = resolve_device(self.job.device)
        self.precision = Precision(self.device, bool(self.trainer.get("use_mixed_precision")))
        name = str(self.config.get("base_model") or "")
        source = check_base_model(name)
        if source.path is None:
            self._phase("preprocessing", f"downloading {name}")
        path = fetch_base_model(source, self._download_progress(name))
        self.control.checkpoint()
        trust = bool(self.config.get("trust_remote_code", False))
        self.tokenizer = loading.load_tokenizer(path, trust)
        frames = split_frames(self.config, load_dataset(self.job.dataset), self.seed)
        for split, frame in frames.items():
            self.splits[split] = texts(self.config, frame, self.tokenizer)
        self._count_tokens()
        self.control.checkpoint()
        self._phase("preprocessing", f"loading {name}")
        self.model = loading.load_base(
            path, self.config, self.device, gradient_checkpointing=self.gradient_checkpointing
        )
        self.base = {"name": name, "path": str(path), "fingerprint": base_fingerprint(path)}
        self.control.checkpoint()
        self._build_training()
        self._describe()
        if self.job.resume_from is not None and self.finetune:
            self._restore(load_checkpoint(Path(self.job.resume_from) / "checkpoints" / LATEST))

    def _download_progress(self, name: str) -> Any:
        def report(done: int, total: int) -> None:
            self.emit(
                ev.DataProgress(
                    time=self.clock(), stage="loading", source=name, index=done, total=total
                )
            )

        return report

    def _build_training(self) -> None:
        train = self.splits["training"].encoded
        self.batch_size = self._batch_size(train)
        self.accumulate = _positive(self.trainer.get("gradient_accumulation_steps"), 1)  # auto: 1
        self.eval_batch_size = _positive(self.trainer.get("eval_batch_size"), self.batch_size)
        if self.finetune:
            loading.freeze_matching(self.model, self.trainer.get("layers_to_freeze_regex"))
            self.plan = plan_training(self.trainer, len(train), self.batch_size)
            self.model = loading.wrap_adapter(
                self.model, self.config.get("adapter"), self.plan.total_steps
            )
            _neftune(self.model, self.config)
            self.trainable = [p for p in self.model.parameters() if p.requires_grad]
            given = self.trainer.get("learning_rate")
            rate = 0.0002 if given is None else float(given)  # Ludwig's LLM default
            self.optimizer = build_optimizer(
                self.trainable, self.trainer.get("optimizer") or {}, rate
            )
            scheduler = self.trainer.get("learning_rate_scheduler") or {}
            self.lr = LearningRate(rate, scheduler, self.plan)
            self.model.train()
        else:
            self.plan = Plan(
                batch_size=self.batch_size,
                steps_per_epoch=1,
                total_steps=0,
                epochs=0,
                checkpoint_every=1,
                checkpoints_after=(),
                evaluations_after=(),
            )
            self.model.eval()

    def _batch_size(self, train: Encoded) -> int:
        size = self.trainer.get("batch_size")
        if isinstance(size, int) and size > 0:
            return size
        longest = sorted(range(len(train)), key=lambda r: -len(train.ids[r]))

        def try_rows(n: int) -> None:
            batch = collate(train, longest[:n], self.tokenizer.pad_token_id)
            out = self.model(**{k: v.to(self.device) for k, v in batch.items()})
            out.loss.backward()
            self.model.zero_grad(set_to_none=True)

        cap = self.trainer.get("max_batch_size")
        chosen = auto_batch_size(try_rows, len(train), self.device.type == "cuda", cap)
        self._phase("preprocessing", f"batch_size auto: {chosen} rows")
        return chosen

    def _count_tokens(self) -> None:
        from ludwig_nb.engines.builtin.llm.tokens import length_limits

        limits = [v for v in length_limits(self.config) if v]
        summary: dict[str, dict[str, float]] = {}
        for split, text in self.splits.items():
            lengths = text.encoded.lengths or [0]
            summary[split] = {
                "rows": len(text.encoded),
                "tokens": sum(lengths),
                "longest": max(lengths),
                "mean": sum(lengths) / len(lengths),
                "truncated": text.encoded.truncated,
                "longest_before": max(text.encoded.full_lengths or [0]),
            }
        self.emit(
            ev.TokensCounted(
                time=self.clock(), splits=summary, limit=min(limits) if limits else None
            )
        )

    def _describe(self) -> None:
        counts = loading.count_parameters(self.model)
        quantization = self.config.get("quantization") or {}
        adapter = (self.config.get("adapter") or {}).get("type", "") if self.finetune else ""
        self.emit(
            ev.ModelDescribed(
                time=self.clock(),
                base_model=self.base["name"],
                architecture=str(getattr(_config_of(self.model), "model_type", "")),
                trainable=counts.trainable if self.finetune else 0,
                total=counts.total,
                adapter=str(adapter or ""),
                quantization=f"{quantization['bits']}-bit" if quantization else "",
                dtype=str(next(self.model.parameters()).dtype),
                gradient_checkpointing=self.gradient_checkpointing,
                estimate_bytes=estimate_for_run(
                    {**self.config, "trainer": {**self.trainer, "batch_size": self.batch_size}},
                    self.splits["training"].encoded.lengths if self.finetune else [],
                    Path(self.base["path"]),
                    self.device,
                ),
            )
        )

    # -- the loop ----------------------------------------------------------------------
    def _loop(self) -> str:
        plan = self.plan
        train = self.splits["training"].encoded
        evaluations, checkpoints = set(plan.evaluations_after), set(plan.checkpoints_after)
        shuffle = bool(self.trainer.get("should_shuffle", True))
        while self.completed < plan.total_steps:
            epoch = plan.epoch_of(self.completed)
            first = epoch * plan.steps_per_epoch
            order = batch_order(len(train), self.seed, epoch, shuffle).tolist()
            self._plan_epoch(epoch, first, order)
            count = min(plan.steps_per_epoch, plan.total_steps - first)
            for i in range(self.completed - first, count):
                step = self.completed
                self._boundary()
                rows = order[i * plan.batch_size : (i + 1) * plan.batch_size]
                self._step(step, epoch, rows)
                self.capture.step_finished()
                if step in evaluations and self._evaluate(step, step in checkpoints):
                    self.plan = plan.ending_after(step)
                    self.emit(
                        ev.ScheduleChanged(
                            time=self.clock(), schedule=self.plan.info(), reason="early stopping"
                        )
                    )
                    return "early stopping"
                if step in checkpoints and step not in evaluations:
                    self._checkpoint(step, best=False)
        return ""

    def _plan_epoch(self, epoch: int, first: int, order: list[int]) -> None:
        train = self.splits["training"].encoded
        lengths = train.lengths
        size = self.plan.batch_size
        tokens = [sum(lengths[r] for r in order[i : i + size]) for i in range(0, len(order), size)]
        self.emit(
            ev.EpochPlanned(
                time=self.clock(),
                epoch=epoch,
                first_step=first,
                padded_tokens=tuple(padded_tokens(lengths, order, size)),
                tokens=tuple(tokens),
            )
        )

    def _boundary(self) -> None:
        self.control.pace()
        self.control.checkpoint()
        if not self.control.paused:
            return
        paused_at = self.clock()

        def on_pause(reason: str) -> None:
            self.emit(ev.Paused(time=paused_at, step=self.completed, reason=reason))

        def on_resume(reason: str) -> None:
            self.emit(
                ev.Resumed(
                    time=self.clock(), step=self.completed, paused_at=paused_at, reason=reason
                )
            )

        self.control.wait_while_paused(on_pause=on_pause, on_resume=on_resume)
        self.control.checkpoint()

    def _step(self, step: int, epoch: int, rows: list[int]) -> None:
        start_time, began = self.clock(), time.perf_counter()
        rate = self.lr.at(step)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        batch = collate(self.splits["training"].encoded, rows, self.tokenizer.pad_token_id)
        mask = batch["attention_mask"]
        sync = (step + 1) % self.accumulate == 0 or step + 1 == self.plan.total_steps
        self._step_index = step
        loss = float(self.runner.run(step, batch, sync, self._forward_backward))
        self.timings["steps"] += time.perf_counter() - began
        if not math.isfinite(loss):
            raise RuntimeError(f"loss became {loss} at step {step}; training stopped")
        self.completed = step + 1
        self.running_loss.append(loss)
        self.emit(
            ev.StepFinished(
                time=self.clock(),
                step=step,
                epoch=epoch,
                start_time=start_time,
                batch_size=len(rows),
                loss=loss,
                learning_rate=rate,
                tokens=int(mask.sum()),
                padded_tokens=int(mask.numel()),
            )
        )

    def _forward_backward(
        self, batch: dict[str, torch.Tensor], share: float, sync: bool
    ) -> torch.Tensor:
        on_device = {k: v.to(self.device) for k, v in batch.items()}
        with self.precision.autocast():
            out = self.model(**on_device)
        # rows whose target a length limit cut away have nothing to learn (the loss would be
        # 0/0): a zero loss keeps the step (and its optimizer step) in place
        targets = bool((on_device["labels"][:, 1:] != -100).any())
        loss = out.loss if targets else out.logits.sum() * 0.0
        strength = float(self.trainer.get("regularization_lambda") or 0.0)
        extra = penalty(self.model, self.trainer.get("regularization_type"), strength)
        total = loss if extra is None else loss + extra
        scaler = self.precision.scaler
        scaled = total * share / self.accumulate
        (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if sync:
            self._optimizer_step()
        detached: torch.Tensor = loss.detach()
        return detached

    def _optimizer_step(self) -> None:
        scaler = self.precision.scaler
        if scaler is not None:
            scaler.unscale_(self.optimizer)
        clip_gradients(self.trainable, self.trainer.get("gradient_clipping"))
        if scaler is not None:
            scaler.step(self.optimizer)
            scaler.update()
        else:
            self.optimizer.step()
        allocate = getattr(getattr(self.model, "base_model", None), "update_and_allocate", None)
        if callable(allocate):  # AdaLoRA moves its rank budget after each optimizer step
            allocate(self._step_index)
        self.optimizer.zero_grad(set_to_none=True)

    def _zero_grad(self) -> None:
        if hasattr(self, "optimizer"):
            self.optimizer.zero_grad(set_to_none=True)

    def _checkpoint_on(self) -> bool:
        if self.gradient_checkpointing:
            return False
        loading.enable_gradient_checkpointing(self.model)
        self.gradient_checkpointing = True
        return True

    # -- evaluation --------------------------------------------------------------------
    def _evaluate(self, step: int, checkpoint: bool) -> bool:
        """Evaluate, show samples, record, checkpoint; True when early stopping ends the run."""
        self._phase("evaluating")
        start_time, began = self.clock(), time.perf_counter()
        name = str(self.config["output_features"][0]["name"])
        mean = sum(self.running_loss) / len(self.running_loss) if self.running_loss else math.nan
        self.running_loss = []
        metrics: dict[str, dict[str, dict[str, float]]] = {
            "training": {name: {"loss": mean}, "combined": {"loss": mean}}
        }
        if self.trainer.get("evaluate_training_set") or not self.finetune:
            metrics["training"] = self._split_metrics("training", name)
        for split in ("validation", "test"):
            if split in self.splits:
                metrics[split] = self._split_metrics(split, name)
        self._samples(step)
        self._record(metrics)
        improved = self._track_best(step, metrics, name)
        self.timings["evaluation"] += time.perf_counter() - began
        self.emit(
            ev.EvaluationFinished(
                time=self.clock(),
                step=step,
                epoch=self.plan.epoch_of(step) if self.finetune else 0,
                start_time=start_time,
                metrics=_finite(metrics),
                improved=improved,
            )
        )
        if checkpoint:
            self._checkpoint(step, best=improved)
        if self.finetune:
            self._phase("training")
        patience = self.trainer.get("early_stop", 5)
        patience = 5 if patience is None else int(patience)
        return "validation" in self.splits and patience > 0 and self.best["stale"] >= patience

    def _split_metrics(self, split: str, name: str) -> dict[str, dict[str, float]]:
        values = evaluate_encoded(
            self.model,
            self.splits[split].encoded,
            self.tokenizer.pad_token_id,
            self.eval_batch_size,
            self.device,
            self.precision.autocast,
        )
        return {name: values, "combined": {"loss": values["loss"]}}

    def _samples(self, step: int) -> None:
        split = next(s for s in ("validation", "test", "training") if s in self.splits)
        text = self.splits[split]
        shown = list(range(min(SAMPLES_SHOWN, len(text.prompts))))
        prompts = texts_only(self.tokenizer, [text.prompts[i] for i in shown], self.config)
        torch.manual_seed(self.seed + step)
        answers = generate(
            self.model,
            self.tokenizer,
            prompts,
            generation_config(self.config.get("generation"), self.tokenizer),
            self.eval_batch_size,
            self.device,
        )
        samples = tuple(
            {
                "prompt": text.prompts[i],
                "expected": (text.targets or [""] * len(text.prompts))[i],
                "generated": answers.texts[k],
            }
            for k, i in enumerate(shown)
        )
        self.emit(ev.SamplesGenerated(time=self.clock(), step=step, split=split, samples=samples))

    def _record(self, metrics: dict[str, dict[str, dict[str, float]]]) -> None:
        for split, per_feature in metrics.items():
            table = self.statistics[split]
            for feature, values in per_feature.items():
                for metric, value in values.items():
                    series = table.setdefault(feature, {}).setdefault(metric, [])
                    series.append(None if math.isnan(value) else value)

    def _track_best(self, step: int, metrics: dict[str, Any], name: str) -> bool:
        split = "validation" if "validation" in metrics else "training"
        field = self.trainer.get("validation_field") or name
        metric = self.trainer.get("validation_metric") or "loss"
        value = metrics[split].get(field, {}).get(metric, math.nan)
        maximize = metric in ("token_accuracy", "sequence_accuracy")
        best = self.best["value"]
        better = not math.isnan(value) and (
            best is None or (value > best if maximize else value < best)
        )
        if not better:
            self.best["stale"] += 1
            return False
        self.best.update(value=value, step=step, metrics=_finite(metrics), stale=0)
        if self.finetune:
            self.best_weights = _trainable_state(self.model)
        return True

    # -- checkpoints and the end -------------------------------------------------------
    def _checkpoint(self, step: int, best: bool) -> None:
        start_time, began = self.clock(), time.perf_counter()
        state = {
            "format": 1,
            "kind": "llm",
            "step": self.completed,
            "last_step": step,
            "epoch": self.plan.epoch_of(step),
            "batch_size": self.plan.batch_size,
            "model": _trainable_state(self.model),
            "optimizer": self.optimizer.state_dict(),
            "lr": self.lr.state_dict(),
            "rng": torch.get_rng_state(),
            "best": json.dumps(self.best),
            "statistics": json.dumps(self.statistics),
            "metadata": json.dumps({"base_model": self.base}),
            "running_loss": list(self.running_loss),
            "micro_batches": self.runner.parts,
            "gradient_checkpointing": self.gradient_checkpointing,
        }
        path = save_checkpoint(self.checkpoints / LATEST, state)
        if best:
            save_checkpoint(self.checkpoints / BEST, state)
        self.timings["checkpoint"] += time.perf_counter() - began
        self.emit(
            ev.CheckpointSaved(
                time=self.clock(), step=step, start_time=start_time, path=str(path), best=best
            )
        )

    def _restore(self, state: dict[str, Any]) -> None:
        _load_trainable(self.model, state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.lr.load_state_dict(state["lr"])
        torch.set_rng_state(state["rng"])
        self.completed = int(state["step"])
        self.best = json.loads(state["best"])
        self.statistics = {**self.statistics, **json.loads(state["statistics"])}
        self.running_loss = list(state.get("running_loss", []))
        self.runner.parts = int(state.get("micro_batches", 1))
        if state.get("gradient_checkpointing"):
            self._checkpoint_on()
        best_file = Path(self.job.resume_from or "") / "checkpoints" / BEST
        if best_file.is_file():
            self.best_weights = load_checkpoint(best_file)["model"]
        log.info("resumed at step %d", self.completed)

    def _finish(self, status: str, reason: str) -> LlmModel:
        if self.best_weights is not None:
            _load_trainable(self.model, self.best_weights)
        self.model.eval()
        model = LlmModel(
            self.config, self.model, self.tokenizer, self.base, self.device, self.precision.autocast
        )
        model.timings = dict(self.timings)
        model.save(Path(self.job.run_dir) / "model")
        write_json_atomic(Path(self.job.run_dir) / "training_statistics.json", self.statistics)
        self.emit(
            ev.RunFinished(
                time=self.clock(),
                status=status,
                step=self.completed,
                reason=reason,
                best_metrics=self.best["metrics"],
            )
        )
        return model


def texts_only(tokenizer: Any, prompts: list[str], config: dict[str, Any]) -> Encoded:
    """The prompts alone, tokenized with the config's limits (for generation)."""
    from ludwig_nb.engines.builtin.llm.tokens import encode_rows, length_limits

    return encode_rows(tokenizer, prompts, None, length_limits(config))


def _trainable_state(model: Any) -> dict[str, torch.Tensor]:
    """The trainable weights only, on the CPU (an adapter's, not the frozen base's)."""
    return {
        name: param.detach().to("cpu", copy=True)
        for name, param in model.named_parameters()
        if param.requires_grad
    }


def _load_trainable(model: Any, state: dict[str, torch.Tensor]) -> None:
    """Copy ``state`` into the model's trainable weights (raises ``KeyError`` on a mismatch)."""
    params = dict(model.named_parameters())
    missing = [name for name in state if name not in params]
    if missing:
        raise KeyError(f"checkpoint weight {missing[0]!r} is not in this model")
    with torch.no_grad():
        for name, value in state.items():
            params[name].copy_(value.to(params[name].device))


def _neftune(model: Any, config: dict[str, Any]) -> None:
    """``model_parameters.neftune_noise_alpha``: noisy embeddings while training (NEFTune)."""
    alpha = float((config.get("model_parameters") or {}).get("neftune_noise_alpha") or 0)
    if alpha <= 0:
        return
    from transformers.integrations.neftune import neftune_post_forward_hook

    embeddings = model.get_input_embeddings()
    embeddings.neftune_noise_alpha = alpha
    embeddings.register_forward_hook(neftune_post_forward_hook)


def _config_of(model: Any) -> Any:
    return getattr(getattr(model, "base_model", model), "config", None) or getattr(
        model, "config", None
    )


def _positive(value: Any, default: int) -> int:
    return int(value) if isinstance(value, int) and value > 0 else default


def _gpu_index(device: torch.device) -> int | None:
    if device.type != "cuda":
        return None
    return device.index if device.index is not None else torch.cuda.current_device()


def _finite(metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        split: {
            feature: {k: v for k, v in values.items() if isinstance(v, float) and math.isfinite(v)}
            for feature, values in per_feature.items()
        }
        for split, per_feature in metrics.items()
    }
