"""What the sidebar knows about runs: registry entries joined with each run's status.json.

The server finds runs only through the registry (one pointer file per run under the
Jupyter runtime directory) and never scans the disk. A run whose process is gone while
its status is still active is reported as ``"interrupted"``. Everything here is plain file
I/O; handlers call it off the event loop.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from ludwig_nb.core import strict_json
from ludwig_nb.core.state import ACTIVE_STATUSES, FINAL_STATUSES
from ludwig_nb.store import registry, rundir

__all__ = [
    "INTERRUPTED",
    "KNOWN_STATUSES",
    "find_run",
    "holds_run",
    "list_runs",
    "run_summary",
    "safe_summary",
]

INTERRUPTED = "interrupted"
KNOWN_STATUSES = ACTIVE_STATUSES | FINAL_STATUSES

#: status.json fields the sidebar shows, by the JSON type each must have (docs/CONTRACTS.md)
_NUMBER_FIELDS = (
    "step",
    "total_steps",
    "epoch",
    "epochs",
    "steps_per_epoch",
    "batch_size",
    "progress",
    "last_loss",
    "best_step",
    "evaluations_since_best",
    "updated_at",
    "finished_at",
    "written_at",
    "paused_seconds",
)
_TEXT_FIELDS = (
    "engine",
    "device",
    "pause_reason",
    "reason",
    "error",
    "write_error",
    "pause_text",
    "end_reason",
    "phase_detail",
    "throttle_text",
    "gpu_slowdown",
    "eta_text",
    "took_text",
)
_ALARM_FIELDS = {"rule": str, "device": int, "value": float, "threshold": float}
_ETA_NUMBERS = ("remaining_s", "low_s", "high_s", "finish_time")
_VERDICTS = ("ok", "at_risk", "late", "unknown", "passed")
_EARLY_STOP_NUMBERS = (
    "patience",
    "upper_bound",
    "likely_step",
    "earliest_step",
    "likely_remaining_s",
)


def _status_name(status: Mapping[str, object], alive: bool, problems: list[str]) -> str:
    name = status.get("status")
    if name is not None and (not isinstance(name, str) or name not in KNOWN_STATUSES):
        problems.append(f"status.json: unknown status {name!r}")
        name = None
    name = str(name or "queued")
    if name not in FINAL_STATUSES and not alive:
        return INTERRUPTED
    return name


def _number(value: object) -> float | int | None:
    """A finite JSON number, or None (bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _read_status(directory: Path, problems: list[str]) -> dict[str, object]:
    path = directory / rundir.STATUS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as err:
        problems.append(f"status.json unreadable ({type(err).__name__}: {err})")
        return {}
    if not text.strip():
        return {}  # a writer that has created but not yet filled it (never atomic here)
    try:
        data = json.loads(text)
    except ValueError as err:
        problems.append(f"status.json is not JSON ({err})")
        return {}
    if not isinstance(data, dict):
        problems.append(f"status.json holds a {type(data).__name__}, not an object")
        return {}
    return data


def _metrics(value: object, where: str, problems: list[str]) -> dict[str, object]:
    """``{split: {feature: {metric: number | null}}}``; anything else is dropped and named."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where} is a {type(value).__name__}, not an object")
        return {}
    out: dict[str, Any] = {}
    for split, features in value.items():
        if not isinstance(features, dict):
            problems.append(f"{where}.{split} is not an object")
            continue
        for feature, metrics in features.items():
            if not isinstance(metrics, dict):
                problems.append(f"{where}.{split}.{feature} is not an object")
                continue
            row = {}
            for metric, number in metrics.items():
                if number is not None and _number(number) is None and not _is_nonfinite(number):
                    problems.append(f"{where}.{split}.{feature}.{metric} is not a number")
                    continue
                row[str(metric)] = number
            out.setdefault(str(split), {})[str(feature)] = row
    return out


def _predictors(value: object, problems: list[str]) -> dict[str, str]:
    """``{feature: "always 'no'"}``; anything else is dropped and named."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems.append("status.json: baseline_predictors is not an object of texts")
        return {}
    return {str(k): v for k, v in value.items()}


def _is_nonfinite(value: object) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _alarms(value: object, problems: list[str]) -> list[dict[str, object]]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"status.json: alarms is a {type(value).__name__}, not a list")
        return []
    out = []
    for i, alarm in enumerate(value):
        if not isinstance(alarm, dict) or not all(
            isinstance(alarm.get(k), kind) or (kind is float and _number(alarm.get(k)) is not None)
            for k, kind in _ALARM_FIELDS.items()
        ):
            problems.append(f"status.json: alarms.{i} is not an alarm")
            continue
        out.append(
            {
                "rule": alarm["rule"],
                "device": alarm["device"],
                "value": alarm["value"],
                "threshold": alarm["threshold"],
                "action": str(alarm.get("action") or "warn"),
                "message": str(alarm.get("message") or ""),
                "time": _number(alarm.get("time")),
                "margin": _number(alarm.get("margin")),
            }
        )
    return out


def _eta(value: object, problems: list[str]) -> dict[str, object] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(f"status.json: eta is a {type(value).__name__}, not an object")
        return None
    eta: dict[str, object] = {k: _number(value.get(k)) for k in _ETA_NUMBERS}
    eta["state"] = str(value.get("state") or "")
    return eta


def _deadline(value: object, problems: list[str]) -> dict[str, object] | None:
    """status.json's ``deadline`` block (None: no deadline, or a run that predates it)."""
    if value is None:
        return None
    at = _number(value.get("at")) if isinstance(value, dict) else None
    if not isinstance(value, dict) or at is None or value.get("verdict") not in _VERDICTS:
        problems.append("status.json: deadline is not a deadline")
        return None
    return {
        "at": at,
        "label": str(value.get("label") or ""),
        "action": str(value.get("action") or ""),
        "verdict": value["verdict"],
        "text": str(value.get("text") or ""),
    }


def _texts(value: object, key: str, problems: list[str]) -> list[str] | None:
    """A list of texts (None when absent: a status.json from before the field)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"status.json: {key} is not a list of texts")
        return None
    return list(value)


def _early_stop(value: object, problems: list[str]) -> dict[str, object] | None:
    """status.json's ``early_stop`` (None: off, or a run that predates it)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(f"status.json: early_stop is a {type(value).__name__}, not an object")
        return None
    block: dict[str, object] = {k: _number(value.get(k)) for k in _EARLY_STOP_NUMBERS}
    block["metric"] = str(value.get("metric") or "")
    block["text"] = str(value.get("text") or "")
    return block


def _entry_fields(
    entry: Mapping[str, object], status: Mapping[str, object], problems: list[str]
) -> tuple[int, dict[str, Any], object]:
    """pid, directory, name, notebook, kernel, started_at from a registry entry."""
    raw_pid = entry.get("pid")
    if raw_pid is None:
        raw_pid = status.get("pid")
    pid = 0
    if isinstance(raw_pid, int) and not isinstance(raw_pid, bool):
        pid = raw_pid
    elif raw_pid is not None:
        problems.append(f"registry entry: pid {raw_pid!r} is not an integer")
    texts = {}
    for key in ("name", "notebook", "kernel"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(f"registry entry: {key} is a {type(value).__name__}, not text")
            value = str(value)
        texts[key] = value
    started = entry.get("started_at")
    if started is not None and _number(started) is None:
        problems.append(f"registry entry: started_at {started!r} is not a time")
        started = None
    return pid, texts, started


def run_summary(
    entry: Mapping[str, object], pid_alive: Callable[[int], bool] = registry.pid_alive
) -> dict[str, object]:
    """One run as the sidebar shows it: the registry entry plus its latest status.

    Never raises for what a file holds: a field of the wrong type is dropped (``null``,
    an empty list or object) and named in ``problems``, so that one bad entry marks only
    itself. ``pid_alive`` is a parameter so that callers on another host (or tests) can
    decide what "alive" means.
    """
    problems: list[str] = []
    raw_dir = entry.get("directory")
    if not isinstance(raw_dir, str) or not raw_dir:
        problems.append("registry entry: directory is missing or not text")
        raw_dir = ""
    directory = Path(raw_dir)
    status = _read_status(directory, problems) if raw_dir else {}
    run_id = str(entry["run_id"])
    if status.get("run_id", run_id) != run_id:  # a directory that holds another run
        problems.append("registry entry: its directory holds another run's status")
        status, raw_dir = {}, ""
    pid, texts, started = _entry_fields(entry, status, problems)
    alive = pid_alive(pid)
    summary: dict[str, Any] = {
        "run_id": run_id,
        "name": texts["name"]
        or (status.get("name") if isinstance(status.get("name"), str) else None)
        or run_id,
        "notebook": texts["notebook"],
        "kernel": texts["kernel"],
        "pid": pid,
        "alive": alive,
        "directory": raw_dir,
        "started_at": started,
        "status": _status_name(status, alive, problems),
        "this_server": False,
    }
    for key in _NUMBER_FIELDS:
        value = status.get(key)
        summary[key] = value if _is_nonfinite(value) else _number(value)
        if value is not None and summary[key] is None:
            problems.append(f"status.json: {key} {value!r} is not a number")
    for key in _TEXT_FIELDS:
        value = status.get(key)
        summary[key] = value if value is None or isinstance(value, str) else str(value)
    summary["latest_metrics"] = _metrics(status.get("latest_metrics"), "latest_metrics", problems)
    summary["best_metrics"] = _metrics(status.get("best_metrics"), "best_metrics", problems)
    summary["baseline"] = _metrics(status.get("baseline"), "baseline", problems)
    summary["baseline_predictors"] = _predictors(status.get("baseline_predictors"), problems)
    summary["alarms"] = _alarms(status.get("alarms"), problems)
    summary["alarm_texts"] = _texts(status.get("alarm_texts"), "alarm_texts", problems)
    summary["eta"] = None if summary["status"] == INTERRUPTED else _eta(status.get("eta"), problems)
    summary["early_stop"] = _early_stop(status.get("early_stop"), problems)
    live = summary["status"] != INTERRUPTED
    summary["deadline"] = _deadline(status.get("deadline"), problems) if live else None
    if summary["status"] == INTERRUPTED and summary["early_stop"] is not None:
        summary["early_stop"]["text"] = ""  # its forecast died with the process
    nonfinite = status.get(strict_json.NONFINITE_KEY)
    summary["problems"] = problems
    flagged = strict_json.flagged(
        {**summary, strict_json.NONFINITE_KEY: nonfinite if isinstance(nonfinite, list) else []}
    )
    flagged.setdefault(strict_json.NONFINITE_KEY, [])
    return flagged


def _broken_summary(entry: Mapping[str, object], err: Exception) -> dict[str, object]:
    """What is shown for an entry that :func:`run_summary` could not read at all."""
    return {
        "run_id": str(entry.get("run_id")),
        "name": str(entry.get("run_id")),
        "notebook": None,
        "kernel": None,
        "pid": 0,
        "alive": False,
        "directory": "",
        "started_at": None,
        "status": INTERRUPTED,
        "this_server": False,
        **dict.fromkeys(_NUMBER_FIELDS),
        **dict.fromkeys(_TEXT_FIELDS),
        "latest_metrics": {},
        "best_metrics": {},
        "baseline": {},
        "baseline_predictors": {},
        "alarms": [],
        "alarm_texts": None,
        "eta": None,
        "early_stop": None,
        "deadline": None,
        "problems": [f"unreadable entry ({type(err).__name__}: {err})"],
        strict_json.NONFINITE_KEY: [],
    }


def holds_run(directory: Path, run_id: str) -> bool:
    """Whether ``directory`` holds run ``run_id``: its ``status.json`` names that run id.

    The only directories whose files the server reads out or writes control files into.
    """
    if not directory.is_absolute() or not directory.is_dir():
        return False
    status = rundir.read_json(directory / rundir.STATUS_FILE)
    return isinstance(status, dict) and status.get("run_id") == run_id


def list_runs(
    registry_dir: Path,
    pid_alive: Callable[[int], bool] = registry.pid_alive,
    kernel_ids: Collection[str] = (),
) -> list[dict[str, object]]:
    """Every run in the registry, newest first; a bad entry marks only itself.

    ``this_server`` is true for a run whose registry entry names one of ``kernel_ids`` (the
    Jupyter kernel ids this server runs or has run): the sidebar lists those runs first.
    """
    runs = [safe_summary(entry, pid_alive) for entry in registry.iter_registry(registry_dir)]
    for run in runs:
        run["this_server"] = run["kernel"] is not None and run["kernel"] in kernel_ids
    return runs


def safe_summary(
    entry: Mapping[str, object], pid_alive: Callable[[int], bool] = registry.pid_alive
) -> dict[str, object]:
    """:func:`run_summary`, or a summary marked with what went wrong: never raises."""
    try:
        return run_summary(entry, pid_alive)
    except Exception as err:  # a shape nobody foresaw: that entry only, never a 500
        return _broken_summary(entry, err)


def find_run(registry_dir: Path, run_id: str) -> dict[str, object] | None:
    """The registry entry for ``run_id``, or None for an invalid or unknown id.

    Only ``<registry_dir>/<run_id>.json`` is ever opened, and only after the id has passed
    :func:`ludwig_nb.store.rundir.is_valid_run_id`, so no request can name a path outside
    the registry. The directory the entry names must hold that run (:func:`holds_run`): an
    entry pointing anywhere else (``/``, a home directory) is no run, whose files are neither
    served nor written.
    """
    if not rundir.is_valid_run_id(run_id):
        return None
    entry = rundir.read_json(registry_dir / f"{run_id}.json")
    directory = None if entry is None else entry.get("directory")
    if entry is None or entry.get("run_id") != run_id or not isinstance(directory, str):
        return None
    if not holds_run(Path(directory), run_id):
        return None
    return entry
