"""What a comparison reads from one run.

A ludwig_nb run (handle or directory) or a Ludwig output directory (``ludwig train/experiment``:
``description.json``, ``training_statistics.json``, ``test_statistics.json``,
``model/model_hyperparameters.json``, LudwigProfiler's ``system_resource_usage/``).

:func:`load_source` gives a :class:`RunRecord`; a path that is neither kind raises
``FileNotFoundError`` naming the path and what was looked for, and a file in it that is damaged
or of the wrong shape a ``SourceFileError`` (a ``ValueError``) naming the file
(``runs/source_files.py``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.runs.source_files import (
    SourceFileError,
    json_object,
    kind_of,
    metric_tables,
    ndjson_objects,
    yaml_mapping,
)
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
    facts: dict[str, Any]  # status, device, gpus, dataset, fingerprint, seed, steps, duration_s

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


def _json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (``{}`` without the file). Raises ``SourceFileError``."""
    return json_object(path) or {}


def _profile_summary(path: Path) -> dict[str, Any]:
    from ludwig_nb.runs.profile_files import PROFILE_FILE, load_profile

    try:
        summary = load_profile(path).get("summary") or {}
    except FileNotFoundError:
        return {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceFileError(f"{path / PROFILE_FILE}: {_reason(exc)}") from None
    if not isinstance(summary, dict):
        raise SourceFileError(f"{path / PROFILE_FILE}: its summary is {kind_of(summary)}")
    return summary


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not text: not a file a run writes"
    return str(exc).split(": ", 1)[-1] if str(exc).startswith("/") else str(exc)


# -- ludwig_nb runs ----------------------------------------------------------------------
def _read_events(path: Path) -> list[ev.Event]:
    """The run's events but its steps (the first line aside).

    Steps are skipped unread (nearly all of a long run's lines); so are lines that are not
    events (a torn last line).

    Raises ``SourceFileError`` for a log with lines none of which is an event.
    """
    file = path / rundir.EVENTS_FILE
    with open(file, "rb") as handle:
        lines = []
        for number, raw in enumerate(handle):
            if number and ev.is_step_line(raw):
                continue  # compare reads evaluations and phases: a long run's steps are skipped
            try:
                lines.append(json.loads(raw))
            except ValueError:  # not JSON, not UTF-8
                lines.append(None)
    out: list[ev.Event] = []
    for data in ndjson_objects(lines, file):
        try:
            out.append(ev.event_from_dict(data))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a torn or foreign line
    return out


def _metrics_table(metrics: object) -> dict[str, dict[str, dict[str, float]]]:
    """An evaluation's metrics with anything not split -> feature -> metric -> number left out."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    if not isinstance(metrics, Mapping):
        return out
    for split, features in metrics.items():
        for feature, values in (features or {}).items() if isinstance(features, Mapping) else ():
            if isinstance(values, Mapping):
                kept = {
                    str(m): float(v)
                    for m, v in values.items()
                    if isinstance(v, int | float) and not isinstance(v, bool)
                }
                out.setdefault(str(split), {})[str(feature)] = kept
    return out


def _from_directory(path: Path, name: str | None, events: list[ev.Event] | None) -> RunRecord:
    events = _read_events(path) if events is None else events
    config = yaml_mapping(path / rundir.CONFIG_FILE)
    status = _json(path / rundir.STATUS_FILE)
    started = next((e for e in events if isinstance(e, ev.RunStarted)), None)
    evaluations = [
        (e, _metrics_table(e.metrics)) for e in events if isinstance(e, ev.EvaluationFinished)
    ]
    first = events[0].time if events else 0.0
    keys = {
        (s, f, m) for _, t in evaluations for s, fs in t.items() for f, ms in fs.items() for m in ms
    }
    curves: dict[tuple[str, str, str], Curve] = {}
    for split, feature, metric in sorted(keys):
        curves[(split, feature, metric)] = Curve(
            step=tuple(float(e.step + 1) for e, _ in evaluations),
            epoch=tuple(float(e.epoch + 1) for e, _ in evaluations),
            elapsed=tuple(e.time - first for e, _ in evaluations),
            value=tuple(t.get(split, {}).get(feature, {}).get(metric) for _, t in evaluations),
        )
    best = status.get("best_metrics") or status.get("latest_metrics") or {}
    test = _json(path / "test_statistics.json")
    metrics = _flatten_metrics(best if isinstance(best, Mapping) else {})
    if test:
        metrics.update(_flatten_metrics({"test": test}))
    description = _json(path / "description.json")
    profile = _profile_summary(path)
    facts = {
        "status": status.get("status") if isinstance(status.get("status"), str) else None,
        "device": started.device if started else status.get("device"),
        "gpus": _gpu_names(profile.get("gpus")),
        "dataset": description.get("dataset") or description.get("training_set"),
        "fingerprint": _data_fingerprint(events),
        "seed": description.get("random_seed"),
        "steps": status.get("step"),
        "duration_s": _duration(status),
    }
    label = status.get("name") if isinstance(status.get("name"), str) else None
    return RunRecord(
        name or label or path.name, path, "ludwig_nb", config, metrics, curves, profile, facts
    )


def _data_fingerprint(events: Sequence[ev.Event]) -> str | None:
    """The content fingerprint of the dataset the run read (None: not recorded)."""
    for event in reversed(events):
        if isinstance(event, ev.DataProgress) and event.stage == "read" and event.fingerprint:
            return event.fingerprint
    return None


def _gpu_names(gpus: object) -> list[str]:
    """The GPU names a profile summary's ``gpus`` (index -> facts) holds."""
    if not isinstance(gpus, Mapping):
        return []
    return sorted({str(g.get("name")) for g in gpus.values() if isinstance(g, Mapping)})


def _duration(status: Mapping[str, Any]) -> float | None:
    start, end = status.get("started_at"), status.get("finished_at")
    if isinstance(start, int | float) and isinstance(end, int | float) and start and end:
        return float(end - start)
    return None


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
    description = _json(path / "description.json")
    config = description.get("config")
    if config is None:
        config = _json(path / "model" / "model_hyperparameters.json")
    if not isinstance(config, dict):
        where = path / "description.json"
        raise SourceFileError(f"{where}: its config is {kind_of(config)}, not an object")
    stats_file = path / "training_statistics.json"
    stats = _json(stats_file)
    every, by_step = _frequency(stats.get("evaluation_frequency"), stats_file)
    curves: dict[tuple[str, str, str], Curve] = {}
    metrics: dict[tuple[str, str, str], float] = {}
    tables = metric_tables(stats, stats_file, ("training", "validation", "test"))
    for key, values in tables.items():
        xs = tuple((i + 1) * every for i in range(len(values)))
        nothing = (None,) * len(xs)
        curves[key] = Curve(
            step=xs if by_step else nothing,
            epoch=nothing if by_step else xs,
            elapsed=nothing,
            value=values,
        )
        finite = [v for v in values if v is not None]
        if finite:
            metrics[key] = finite[-1]
    test = _json(path / "test_statistics.json")
    if test:
        metrics.update(_flatten_metrics({"test": test}))
    facts = {
        "status": "completed" if stats else None,
        "device": None,
        "gpus": _ludwig_gpus(description.get("compute")),
        "dataset": description.get("dataset") or description.get("training_set"),
        "seed": description.get("random_seed"),
        "steps": None,
        "duration_s": None,
    }
    profile = _profile_summary(path)
    return RunRecord(name or path.name, path, "ludwig", config, metrics, curves, profile, facts)


def _frequency(frequency: object, path: Path) -> tuple[float, bool]:
    """``evaluation_frequency`` as (evaluations apart, by step). Raises ``SourceFileError``."""
    if frequency is None:
        return 1.0, False
    every = frequency.get("frequency", 1) if isinstance(frequency, dict) else None
    period = frequency.get("period", "epoch") if isinstance(frequency, dict) else None
    if (
        not isinstance(every, int | float)
        or isinstance(every, bool)
        or period
        not in (
            "epoch",
            "step",
        )
    ):
        raise SourceFileError(
            f"{path}: evaluation_frequency is {frequency!r}, not "
            "{frequency: <number>, period: epoch or step}"
        )
    return float(every), period == "step"


def _ludwig_gpus(compute: object) -> list[str]:
    """The GPU types ``description.json``'s ``compute.devices`` names."""
    devices = compute.get("devices") if isinstance(compute, Mapping) else None
    if not isinstance(devices, Mapping):
        return []
    return sorted(str(d.get("gpu_type")) for d in devices.values() if isinstance(d, Mapping))
