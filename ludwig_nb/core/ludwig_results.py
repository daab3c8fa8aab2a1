"""Ludwig 0.11's result files, built from a run's events: what ``ludwig visualize`` reads.

* ``training_statistics.json`` (``ludwig.api.TrainingStats``): ``{"training", "validation",
  "test": {feature | "combined": {metric: [one value per evaluation]}},
  "evaluation_frequency": {"frequency", "period": "epoch" | "step"}}``. Ludwig loads it
  with a marshmallow schema that refuses unknown top-level keys, so nothing else is there.
* ``test_statistics.json`` (what ``LudwigModel.evaluate`` returns): ``{feature |
  "combined": {metric: value}}`` for the test split at the best evaluation (the weights the
  final model keeps), written only when the run has a test split.
* ``description.json`` (``get_experiment_description``): versions, command, seed, dataset,
  data format, the config and the compute.

Pure functions over events and dicts; the run layer writes the files.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ludwig_nb.core import events as ev

__all__ = [
    "DESCRIPTION_FILE",
    "SPLITS",
    "TEST_STATISTICS_FILE",
    "TRAINING_STATISTICS_FILE",
    "description",
    "evaluation_frequency",
    "test_statistics",
    "training_statistics",
]

TRAINING_STATISTICS_FILE = "training_statistics.json"
TEST_STATISTICS_FILE = "test_statistics.json"
DESCRIPTION_FILE = "description.json"
SPLITS = ("training", "validation", "test")


def evaluation_frequency(trainer: Mapping[str, Any]) -> dict[str, object]:
    """Ludwig's rule (``api.py``).

    Every ``steps_per_checkpoint`` steps, else every ``1 / checkpoints_per_epoch`` epochs, else
    every epoch.
    """
    steps = trainer.get("steps_per_checkpoint")
    if steps:
        return {"frequency": float(steps), "period": "step"}
    per_epoch = trainer.get("checkpoints_per_epoch")
    if per_epoch:
        return {"frequency": 1.0 / float(per_epoch), "period": "epoch"}
    return {"frequency": 1.0, "period": "epoch"}


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def training_statistics(
    events: Iterable[ev.Event], trainer: Mapping[str, object]
) -> dict[str, object]:
    """Ludwig's training statistics from our evaluation events.

    One list per split, feature and metric, one entry per evaluation (None where an evaluation
    lacked the metric, so every list has the same length).
    """
    evaluations = [e for e in events if isinstance(e, ev.EvaluationFinished)]
    stats: dict[str, Any] = {split: {} for split in SPLITS}
    for split in SPLITS:
        names = {
            (feature, metric)
            for e in evaluations
            for feature, metrics in (e.metrics.get(split) or {}).items()
            for metric in metrics
        }
        for feature, metric in sorted(names):
            stats[split].setdefault(feature, {})[metric] = [
                _finite((e.metrics.get(split) or {}).get(feature, {}).get(metric))
                for e in evaluations
            ]
    stats["evaluation_frequency"] = evaluation_frequency(trainer)
    return stats


def test_statistics(events: Iterable[ev.Event]) -> dict[str, object] | None:
    """The test split's metrics at the best evaluation (the last one when none improved).

    None when no evaluation had a test split.
    """
    with_test = [
        e for e in events if isinstance(e, ev.EvaluationFinished) and e.metrics.get("test")
    ]
    if not with_test:
        return None
    improved = [e for e in with_test if e.improved]
    chosen = (improved or with_test)[-1]
    return {
        feature: {metric: _finite(value) for metric, value in metrics.items()}
        for feature, metrics in chosen.metrics["test"].items()
    }


def description(
    config: Mapping[str, object],
    *,
    versions: Mapping[str, str | None],
    command: str,
    random_seed: int | None,
    dataset: object,
    compute: Mapping[str, object],
) -> dict[str, object]:
    """``description.json``.

    Ludwig's keys (``ludwig_version``, ``command``, ``random_seed``, ``dataset``, ``data_format``,
    ``config``, ``torch_version``, ``compute``) plus ``ludwig_nb_version``. ``dataset`` is recorded
    when it is a path (or a dict of split paths), as Ludwig does; an in-memory DataFrame is
    "dataframe".
    """
    out: dict[str, object] = {
        "ludwig_version": versions.get("ludwig"),
        "ludwig_nb_version": versions.get("ludwig_nb"),
        "command": command,
    }
    if random_seed is not None:
        out["random_seed"] = random_seed
    if isinstance(dataset, str):
        out["dataset"] = dataset
    elif isinstance(dataset, Mapping):
        for split, value in dataset.items():
            if isinstance(value, str):
                out[f"{split}_set"] = value
    out["data_format"] = _data_format(dataset)
    out["config"] = dict(config)
    out["torch_version"] = versions.get("torch")
    out["compute"] = dict(compute)
    return out


def _data_format(dataset: object) -> str:
    if isinstance(dataset, Mapping):
        dataset = next(iter(dataset.values()), None)
    if isinstance(dataset, str):
        suffix = dataset.rsplit(".", 1)[-1].lower() if "." in dataset else ""
        return {"jsonl": "jsonl", "json": "json", "parquet": "parquet", "tsv": "tsv"}.get(
            suffix, "csv"
        )
    return "dataframe"
