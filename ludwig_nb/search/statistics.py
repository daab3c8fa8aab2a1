"""``hyperopt_statistics.json``: a search's results in the shape Ludwig writes them.

The section and the completed trials, best first, each with its parameters, metric_score,
training_stats (split -> feature -> metric -> one value per evaluation) and eval_stats (the
test split of its last evaluation), read from the trials' ``events.ndjson``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core import strict_json
from ludwig_nb.search.trial import TrialRecord
from ludwig_nb.store import rundir

__all__ = ["STATISTICS_FILE", "run_statistics", "write_statistics"]

STATISTICS_FILE = "hyperopt_statistics.json"


def write_statistics(
    directory: Path, section: dict[str, Any], goal: str, records: Sequence[TrialRecord]
) -> None:
    """Write ``<directory>/hyperopt_statistics.json`` atomically. Raises ``OSError``.

    Args:
        directory: the search directory.
        section: the rendered ``hyperopt`` section (keys starting with ``_`` are left out).
        goal: ``minimize`` or ``maximize``: the order of the results.
        records: every trial; the completed ones with a metric are written.
    """
    results = []
    for trial in records:
        if trial.state != "completed" or trial.metric is None:
            continue
        training_stats, eval_stats = run_statistics(trial.run_dir)
        results.append(
            {
                "parameters": trial.params,
                "metric_score": trial.metric,
                "training_stats": training_stats,
                "eval_stats": eval_stats,
            }
        )
    results.sort(key=lambda r: float(r["metric_score"]), reverse=goal == "maximize")  # type: ignore[arg-type]
    kept = {k: v for k, v in section.items() if not k.startswith("_")}
    stats = {"hyperopt_config": kept, "hyperopt_results": results}
    tmp = directory / (STATISTICS_FILE + ".tmp")
    tmp.write_text(strict_json.dumps(strict_json.flagged(stats), indent=2), encoding="utf-8")
    tmp.replace(directory / STATISTICS_FILE)


def run_statistics(run_dir: str | None) -> tuple[dict[str, object], dict[str, object]]:
    """A trial's results from its ``events.ndjson`` in Ludwig's shapes.

    Ludwig's training_statistics (split -> feature -> metric -> per-evaluation list) and the
    test split of the last evaluation; both empty without a run directory or its log.
    """
    training: dict[str, Any] = {}
    last: dict[str, object] = {}
    if run_dir is None:
        return training, last
    for entry in _evaluations(Path(run_dir) / rundir.EVENTS_FILE):
        metrics = entry.get("metrics")
        if entry.get("type") != "evaluation_finished" or not isinstance(metrics, dict):
            continue
        for split, features in _mappings(metrics):
            for feature, values in _mappings(features):
                for metric, value in values.items():
                    training.setdefault(split, {}).setdefault(feature, {}).setdefault(
                        metric, []
                    ).append(value)
        test = metrics.get("test")
        last = test if isinstance(test, dict) else {}
    return training, last


def _mappings(value: object) -> list[tuple[str, dict[str, Any]]]:
    """The items of ``value`` whose values are mappings (a damaged log's others are skipped)."""
    if not isinstance(value, dict):
        return []
    return [(str(k), v) for k, v in value.items() if isinstance(v, dict)]


def _evaluations(path: Path) -> list[dict[str, Any]]:
    """The objects of the event log ``path`` but its steps (skipped unread); [] without it."""
    out: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                if ev.is_step_line(raw):
                    continue
                with contextlib.suppress(ValueError):  # a torn line, bytes that are not text
                    entry = json.loads(raw)
                    if isinstance(entry, dict):
                        out.append(entry)
    except OSError:
        return []
    return out
