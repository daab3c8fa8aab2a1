"""One Ludwig run: ``LudwigModel.train`` with our callback, in the run's thread.

Imports Ludwig at module level: import it only inside a run (engine.py shows the import as a
phase). A stop before Ludwig's first evaluation makes ``LudwigModel.train`` raise
"No checkpoint was saved"; the run then keeps the weights it has (the trainer's model,
unchanged by the failed reload) and saves them in Ludwig's layout, as a stopped run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from ludwig.api import LudwigModel

from ludwig_nb.core import events as ev
from ludwig_nb.core.control import Control
from ludwig_nb.engines.base import Emit, TrainJob
from ludwig_nb.engines.ludwig.callback import EventCallback, _stop_text
from ludwig_nb.engines.ludwig.layout import (
    EXPERIMENT,
    MODEL_NAME,
    NO_CHECKPOINT,
    OUTPUT_DIR,
    ludwig_logging_level,
    point_run_at,
)
from ludwig_nb.engines.ludwig.metrics import metrics_at
from ludwig_nb.engines.ludwig.model import LudwigTrainedModel
from ludwig_nb.engines.manifest import write_manifest

__all__ = ["LudwigTraining"]


class LudwigTraining:
    """Runs one job; :meth:`run` returns the trained model.

    Args:
        job: The run's job (config, data, run directory, options).
        emit: Where events go.
        control: The run's stop / pause control.
        clock: Wall-clock seconds for the events.
    """

    def __init__(self, job: TrainJob, emit: Emit, control: Control, clock: Callable[[], float]):
        self.job, self.emit, self.control, self.clock = job, emit, control, clock
        self.output = Path(job.run_dir) / OUTPUT_DIR

    def run(self) -> LudwigTrainedModel:
        """Train with ``LudwigModel`` in this thread, emitting our events; returns the model."""
        config = _for_ludwig(self.job.config)
        self.emit(
            ev.PhaseChanged(time=self.clock(), phase="preprocessing", detail="loading the data")
        )
        data = _loaded(self.job.dataset)
        callback = EventCallback(
            self.emit,
            self.control,
            self.clock,
            run_id=self.job.run_id,
            name=self.job.name,
            evaluation_rows=_evaluation_rows(data, config),
        )
        # the local backend, its cache (and preprocessing lock file) inside the run directory,
        # never in the kernel's working directory or beside the user's data
        backend = {"type": "local", "cache_dir": str(self.output / "cache")}
        model = LudwigModel(
            config, logging_level=ludwig_logging_level(), backend=backend, callbacks=[callback]
        )
        experiment = self.output / f"{EXPERIMENT}_{MODEL_NAME}"
        try:
            model.train(
                **_dataset_arguments(data),
                output_directory=str(self.output),
                experiment_name=EXPERIMENT,
                model_name=MODEL_NAME,
                random_seed=self.job.seed if self.job.seed is not None else 42,
                skip_save_processed_input=True,
            )
        except RuntimeError as err:
            if NO_CHECKPOINT not in str(err) or callback.stopped is None:
                raise
            model.training_set_metadata = callback.metadata  # what train() sets after a success
            model.save(str(experiment / "model"))  # the weights the stop left
        return self._finish(model, callback, experiment)

    def _finish(self, model: Any, callback: EventCallback, experiment: Path) -> LudwigTrainedModel:
        model_dir = experiment / "model"
        write_manifest(model_dir, "ludwig")
        point_run_at(Path(self.job.run_dir), model_dir, experiment / "training_statistics.json")
        schedule = callback.schedule
        done = callback.steps_done
        if callback.stopped is not None:
            status, reason = "stopped", _stop_text(callback.stopped)
        elif schedule is not None and done < schedule.total_steps:
            status, reason = "completed", "early stopping"
            self.emit(
                ev.ScheduleChanged(
                    time=self.clock(), schedule=_cut(schedule, done), reason="early stopping"
                )
            )
        else:
            status, reason = "completed", ""
        best = _best_metrics(callback)
        self.emit(
            ev.RunFinished(
                time=self.clock(), status=status, step=done, reason=reason, best_metrics=best
            )
        )
        return LudwigTrainedModel(model, model_dir)


#: sampling settings transformers 5 refuses beside ``do_sample: false`` (it will not save such a
#: generation config, so Ludwig 0.11 fails at the end of a greedy LLM run)
_SAMPLING_ONLY = ("temperature", "top_k", "top_p", "typical_p")


def _for_ludwig(config: dict[str, Any]) -> dict[str, Any]:
    """The rendered config as Ludwig takes it.

    No ``gpu_watch`` (ours); a greedy LLM's generation without the sampling-only settings
    (they do nothing without sampling).
    """
    out = {k: v for k, v in config.items() if k != "gpu_watch"}
    generation = out.get("generation")
    if out.get("model_type") == "llm" and generation and generation.get("do_sample") is False:
        out["generation"] = {k: (None if k in _SAMPLING_ONLY else v) for k, v in generation.items()}
    return out


def _dataset_arguments(dataset: Any) -> dict[str, Any]:
    """``LudwigModel.train`` keywords for a frame, a path or a dict of splits."""
    if isinstance(dataset, dict):
        names = {"training": "training_set", "validation": "validation_set", "test": "test_set"}
        return {names[k]: v for k, v in dataset.items() if v is not None}
    return {"dataset": dataset}


def _loaded(dataset: Any) -> Any:
    if isinstance(dataset, dict):
        return {k: _source(v) for k, v in dataset.items() if v is not None}
    return _source(dataset)


def _source(value: Any) -> Any:
    """Load a table file ourselves; pass other formats to Ludwig as paths.

    A table file we read is loaded here, in the run's thread (our DataError for a bad file, and no
    lock file beside the user's data); other formats go to Ludwig as paths.
    """
    from ludwig_nb.data.loading import TABLE_SUFFIXES, load_table

    if not isinstance(value, str | Path):
        return value
    suffixes = [s.lower() for s in Path(value).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".zip", ".xz"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in TABLE_SUFFIXES:
        return load_table(value)
    return str(value)


def _evaluation_rows(dataset: Any, config: dict[str, Any]) -> int:
    """Rows one evaluation covers (validation + test), known before Ludwig splits.

    The explicit splits' lengths, or the random split's share of a frame; 0 when unknown.
    """
    if isinstance(dataset, dict):
        frames = [v for k, v in dataset.items() if k != "training" and isinstance(v, pd.DataFrame)]
        return sum(len(v) for v in frames)
    if not isinstance(dataset, pd.DataFrame):
        return 0
    split = (config.get("preprocessing") or {}).get("split") or {}
    probabilities = split.get("probabilities") or [0.7, 0.1, 0.2]
    if split.get("type", "random") != "random" or len(probabilities) != 3:
        return 0
    return math.ceil(len(dataset) * float(probabilities[1] + probabilities[2]))


def _cut(schedule: ev.ScheduleInfo, done: int) -> ev.ScheduleInfo:
    last = done - 1
    return ev.ScheduleInfo(
        total_steps=done,
        steps_per_epoch=schedule.steps_per_epoch,
        epochs=math.ceil(done / max(1, schedule.steps_per_epoch)),
        epoch_starts=tuple(s for s in schedule.epoch_starts if s <= last),
        evaluations_after=tuple(s for s in schedule.evaluations_after if s <= last),
        checkpoints_after=tuple(s for s in schedule.checkpoints_after if s <= last),
        batch_size=schedule.batch_size,
        evaluation_batches=schedule.evaluation_batches,
    )


def _best_metrics(callback: EventCallback) -> dict[str, Any]:
    """The metrics of the evaluation Ludwig kept as best (its model's), or the last ones."""
    tracker = callback.tracker
    if tracker is None:
        return {}
    return metrics_at(tracker, callback.best_step) if callback.best_step else metrics_at(tracker)
