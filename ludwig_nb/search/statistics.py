"""``hyperopt_statistics.json``: a search's results in the shape Ludwig writes them.

The section and the completed trials, best first, each with its parameters, metric_score,
training_stats (split -> feature -> metric -> one value per evaluation) and eval_stats (the
test split of its last evaluation), read from the trials' ``events.ndjson``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
    tmp.write_text(json.dumps(stats, indent=2, allow_nan=False, default=str), encoding="utf-8")
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
    events, _, _ = rundir.read_events(Path(run_dir) / rundir.EVENTS_FILE)
    for entry in events:
        if entry.get("type") != "evaluation_finished":
            continue
        metrics_by_split: dict[str, Any] = entry.get("metrics") or {}  # type: ignore[assignment]
        for split, features in metrics_by_split.items():
            for feature, metrics in features.items():
                for metric, value in metrics.items():
                    training.setdefault(split, {}).setdefault(feature, {}).setdefault(
                        metric, []
                    ).append(value)
        last = metrics_by_split.get("test", {})
    return training, last
