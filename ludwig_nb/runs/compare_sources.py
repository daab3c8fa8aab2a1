"""What a comparison reads from one run.

A ludwig_nb run (handle or directory) or a Ludwig output directory (``ludwig train/experiment``:
``description.json``, ``training_statistics.json``, ``test_statistics.json``,
``model/model_hyperparameters.json``, LudwigProfiler's ``system_resource_usage/``).

:func:`load_source` gives a :class:`RunRecord`; a path that is neither kind raises
``FileNotFoundError`` naming the path and what was looked for.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ludwig_nb.core import events as ev
from ludwig_nb.store import rundir

__all__ = ["Curve", "RunRecord", "hardware_label", "load_source"]


@dataclasses.dataclass(frozen=True)
class Curve:
    """One metric over a run's evaluations.

    X in steps, epochs and elapsed seconds (``None`` where the source does not say).
    """

    step: tuple[float | None, ...]
    epoch: tuple[float | None, ...]
    elapsed: tuple[float | None, ...]
    value: tuple[float | None, ...]


@dataclasses.dataclass
class RunRecord:
    """Everything a comparison needs from one run.

    ``metrics``: ``{(split, feature, metric): value}`` of the run's final model; ``profile``: the
    resource summary (our ``summary`` or an imported LudwigProfiler one), ``{}`` when there is none.
    """

    name: str
    directory: Path | None
    kind: str  # "ludwig_nb" | "ludwig"
    config: dict[str, Any]
    metrics: dict[tuple[str, str, str], float]
    curves: dict[tuple[str, str, str], Curve]
    profile: dict[str, object]
    facts: dict[str, Any]  # status, device, gpus, dataset, seed, steps, duration_s

    @property
    def hardware(self) -> str:
        """What the run trained on, in words (see :func:`hardware_label`)."""
        return hardware_label(self.facts)


def hardware_label(facts: Mapping[str, Any]) -> str:
    """What a run trained on.

    The GPU names its profile saw when it trained on a GPU (or, for a Ludwig directory, the GPUs its
    description names), else the device its ``RunStarted`` names ("cpu", "cuda:1"); "" when nothing
    says. The label does not depend on whether the sampler ticked before the run ended, so two runs
    on the same machine compare as the same hardware however short they were.
    """
    device = str(facts.get("device") or "")
    names = ", ".join(facts.get("gpus") or [])
    if device and not device.startswith("cuda"):
        return device  # trained on the CPU (a simulated GPU's samples do not change that)
    return names or device


def load_source(source: Any, name: str | None = None) -> RunRecord:
    """A run handle, a ludwig_nb run directory or a Ludwig output directory."""
    if hasattr(source, "directory") and hasattr(source, "events"):
        return _from_directory(Path(source.directory), name or source.name, list(source.events))
    path = Path(os.fspath(source)).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"cannot compare {str(path)!r}: no such run directory")
    if (path / rundir.EVENTS_FILE).is_file():
        return _from_directory(path, name, None)
    if (path / "training_statistics.json").is_file() or (path / "description.json").is_file():
        return _from_ludwig(path, name)
    raise FileNotFoundError(
        f"cannot compare {str(path)!r}: it is neither a ludwig_nb run directory (no "
        "events.ndjson) nor a Ludwig output directory (no training_statistics.json or "
        "description.json)"
    )


def _json(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None


def _profile_summary(path: Path) -> dict[str, Any]:
    from ludwig_nb.runs.profile_files import load_profile

    try:
        summary: dict[str, object] = load_profile(path).get("summary") or {}
        return summary
    except FileNotFoundError:
        return {}


# -- ludwig_nb runs ----------------------------------------------------------------------
def _read_events(path: Path) -> list[ev.Event]:
    out: list[ev.Event] = []
    with open(path / rundir.EVENTS_FILE, encoding="utf-8") as lines:
        for line in lines:
            try:
                out.append(ev.event_from_dict(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line of a crashed run
    return out


def _from_directory(path: Path, name: str | None, events: list[ev.Event] | None) -> RunRecord:
    events = _read_events(path) if events is None else events
    config = yaml.safe_load((path / rundir.CONFIG_FILE).read_text(encoding="utf-8")) or {}
    status = _json(path / rundir.STATUS_FILE) or {}
    started = next((e for e in events if isinstance(e, ev.RunStarted)), None)
    evaluations = [e for e in events if isinstance(e, ev.EvaluationFinished)]
    first = events[0].time if events else 0.0
    curves: dict[tuple[str, str, str], Curve] = {}
    for key in sorted(
        {
            (s, f, m)
            for e in evaluations
            for s, fs in e.metrics.items()
            for f, ms in fs.items()
            for m in ms
        }
    ):
        split, feature, metric = key
        curves[key] = Curve(
            step=tuple(float(e.step + 1) for e in evaluations),
            epoch=tuple(float(e.epoch + 1) for e in evaluations),
            elapsed=tuple(e.time - first for e in evaluations),
            value=tuple(e.metrics.get(split, {}).get(feature, {}).get(metric) for e in evaluations),
        )
    best = status.get("best_metrics") or status.get("latest_metrics") or {}
    test = _json(path / "test_statistics.json")
    metrics = _flatten_metrics(best)
    if test:
        metrics.update(_flatten_metrics({"test": test}))
    description = _json(path / "description.json") or {}
    profile = _profile_summary(path)
    facts = {
        "status": status.get("status"),
        "device": started.device if started else status.get("device"),
        "gpus": sorted({str(g.get("name")) for g in (profile.get("gpus") or {}).values()}),
        "dataset": description.get("dataset") or description.get("training_set"),
        "seed": description.get("random_seed"),
        "steps": status.get("step"),
        "duration_s": (status["finished_at"] - status["started_at"])
        if status.get("finished_at") and status.get("started_at")
        else None,
    }
    return RunRecord(
        name or status.get("name") or path.name,
        path,
        "ludwig_nb",
        config,
        metrics,
        curves,
        profile,
        facts,
    )


def _flatten_metrics(metrics: Mapping[str, object]) -> dict[tuple[str, str, str], float]:
    out = {}
    for split, features in metrics.items():
        if not isinstance(features, Mapping):
            continue
        for feature, values in features.items():
            if not isinstance(values, Mapping):
                continue
            for metric, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    out[(split, feature, metric)] = float(value)
    return out


# -- Ludwig output directories -----------------------------------------------------------
def _from_ludwig(path: Path, name: str | None) -> RunRecord:
    description = _json(path / "description.json") or {}
    config = description.get("config") or _json(path / "model" / "model_hyperparameters.json")
    stats = _json(path / "training_statistics.json") or {}
    frequency = stats.get("evaluation_frequency") or {"frequency": 1.0, "period": "epoch"}
    curves: dict[tuple[str, str, str], Curve] = {}
    metrics: dict[tuple[str, str, str], float] = {}
    for split in ("training", "validation", "test"):
        for feature, by_metric in (stats.get(split) or {}).items():
            for metric, values in by_metric.items():
                xs = [(i + 1) * float(frequency["frequency"]) for i in range(len(values))]
                by_step = frequency["period"] == "step"
                curves[(split, feature, metric)] = Curve(
                    step=tuple(xs) if by_step else (None,) * len(xs),
                    epoch=(None,) * len(xs) if by_step else tuple(xs),
                    elapsed=(None,) * len(xs),
                    value=tuple(values),
                )
                finite = [v for v in values if isinstance(v, (int, float))]
                if finite:
                    metrics[(split, feature, metric)] = float(finite[-1])
    test = _json(path / "test_statistics.json")
    if test:
        metrics.update(_flatten_metrics({"test": test}))
    facts = {
        "status": "completed" if stats else None,
        "device": None,
        "gpus": sorted(
            str(d.get("gpu_type"))
            for d in ((description.get("compute") or {}).get("devices") or {}).values()
        ),
        "dataset": description.get("dataset") or description.get("training_set"),
        "seed": description.get("random_seed"),
        "steps": None,
        "duration_s": None,
    }
    return RunRecord(
        name or path.name,
        path,
        "ludwig",
        dict(config or {}),
        metrics,
        curves,
        _profile_summary(path),
        facts,
    )
