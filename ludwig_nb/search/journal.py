"""A search's journal, ``trials.ndjson``: one line per trial start, evaluation and end.

Append-only and flushed to disk line by line, so that a search stopped at any point (a
kernel that died included) resumes from it: the finished trials are read back and never
rerun, a trial that was running reruns.

Lines are strict JSON (``core.strict_json``: a non-finite number is written as ``null`` and its
path listed under ``nonfinite``). Reading back, the last line cut short by a crash is skipped
(and cut off, so the next entry starts a line of its own); any other line that is not a journal
entry (not JSON, not an object, a field of the wrong kind) is skipped with a
:class:`JournalWarning` that names the file and the line.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.core import strict_json
from ludwig_nb.search.trial import FINISHED, TrialRecord

__all__ = ["JOURNAL_FILE", "Journal", "JournalWarning", "finished_entry"]

JOURNAL_FILE = "trials.ndjson"


class JournalWarning(UserWarning):
    """A line of a search's journal that is not a journal entry was skipped."""


class Journal:
    """The journal of the search in ``directory``.

    Args:
        directory: the search directory.
        clock: wall-clock seconds, stamped on every line as ``time``.
        lock: held while a line is written (the search's lock: lines never interleave).
    """

    def __init__(self, directory: Path, clock: Callable[[], float], lock: threading.RLock) -> None:
        self.path = directory / JOURNAL_FILE
        self._clock = clock
        self._lock = lock

    def append(self, entry: dict[str, object]) -> None:
        """Write one line (``time`` first) and flush it to disk. Raises ``OSError``."""
        entry = strict_json.flagged({"time": self._clock(), **entry})
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(strict_json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def restore(self) -> dict[int, TrialRecord]:
        """The trials the journal holds, by number.

        A last line cut short by a crash is skipped and cut off the file (the next entry then
        starts a line of its own; nothing could read it); other lines that are not entries are
        skipped with a :class:`JournalWarning`. Raises ``OSError`` when the file cannot be read.
        """
        trials: dict[int, TrialRecord] = {}
        if not self.path.exists():
            return trials
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            torn = number == len(lines)  # no newline after it: a write the crash cut short
            problem = self._read_line(raw, trials)
            if problem is not None and not torn:
                warnings.warn(
                    f"{self.path}, line {number}: {problem}; the line is skipped",
                    JournalWarning,
                    stacklevel=2,
                )
        if data and not data.endswith(b"\n"):  # the search's folder lock is held
            with self._lock, self.path.open("r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)  # the cut line: unreadable, gone
        return trials

    @staticmethod
    def _read_line(raw: bytes, trials: dict[int, TrialRecord]) -> str | None:
        """Apply one line to ``trials``; what is wrong with it, or None when it was an entry."""
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return "not a JSON line"
        if not isinstance(entry, dict):
            return f"{_KINDS.get(type(entry), 'a value')}, not a journal entry (an object)"
        number = entry.get("trial")
        if not isinstance(number, int) or isinstance(number, bool):
            return None if "trial" not in entry else "its trial is not a number"
        try:
            if entry.get("event") == "trial_started":
                if not isinstance(entry["params"], dict):
                    return "its params are not a mapping"
                trials[number] = TrialRecord(
                    number=number,
                    params=entry["params"],
                    state="running",
                    started=float(entry["time"]),
                )
            elif number in trials:
                _replay(trials[number], entry)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            return f"an entry with a missing or wrong field ({type(exc).__name__}: {exc})"
        return None


_KINDS = {list: "a JSON list", str: "a JSON string", int: "a number", float: "a number"}
_KINDS.update({bool: "true or false", type(None): "null"})


def _number_or_none(value: object) -> float | None:
    """``value`` as a float (None stays None). Raises ``TypeError`` for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    return float(value)


def _replay(record: TrialRecord, entry: dict[str, Any]) -> None:
    """Apply a later line of ``record``'s trial.

    Raises ``KeyError``, ``TypeError`` or ``ValueError`` (the record unchanged) for a line with
    a missing or wrong field.
    """
    kind = entry.get("event")
    if kind == "trial_evaluated":
        step, value = int(entry["step"]), _number_or_none(entry["value"])
        if value is None:
            return  # a non-finite value written as null: the search never reports one
        record.curve.append((step, value))
        record.last = value
    elif kind == "trial_finished":
        if entry["state"] not in FINISHED:
            raise ValueError(f"unknown trial state {entry['state']!r}")
        schedule, gpu = entry.get("schedule"), entry.get("gpu")
        read: dict[str, object] = {
            "state": str(entry["state"]),
            "metric": _number_or_none(entry.get("metric")),
            "epoch": int(entry.get("epoch") or 0),
            "ended": float(entry["time"]),
            "run_dir": None if entry.get("run_dir") is None else str(entry["run_dir"]),
            "error": None if entry.get("error") is None else str(entry["error"]),
            "search_stopped": bool(entry.get("search_stopped")),
            "steps": int(entry.get("steps") or 0),
            "step_s": _number_or_none(entry.get("step_s")),
            "schedule": ev.ScheduleInfo.from_dict(schedule) if schedule else None,
            "gpu": (int(gpu[0]), float(gpu[1])) if gpu else None,
        }
        for name, field in read.items():
            setattr(record, name, field)


def finished_entry(record: TrialRecord, state: str) -> dict[str, object]:
    """The ``trial_finished`` line of a trial that ended in ``state``."""
    return {
        "event": "trial_finished",
        "trial": record.number,
        "state": state,
        "metric": record.metric,
        "epoch": record.epoch,
        "duration_s": record.duration_s,
        "run_dir": record.run_dir,
        "error": record.error,
        "search_stopped": record.search_stopped,
        "steps": record.steps,
        "step_s": record.step_s,
        "schedule": record.schedule.to_dict() if record.schedule is not None else None,
        "gpu": list(record.gpu) if record.gpu is not None else None,
    }
