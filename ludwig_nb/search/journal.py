"""A search's journal, ``trials.ndjson``: one line per trial start, evaluation and end.

Append-only and flushed to disk line by line, so that a search stopped at any point (a
kernel that died included) resumes from it: the finished trials are read back and never
rerun, a trial that was running reruns.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ludwig_nb.core import events as ev
from ludwig_nb.search.trial import TrialRecord

__all__ = ["JOURNAL_FILE", "Journal", "finished_entry"]

JOURNAL_FILE = "trials.ndjson"


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
        entry = {"time": self._clock(), **entry}
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, allow_nan=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def restore(self) -> dict[int, TrialRecord]:
        """The trials the journal holds, by number (a line cut short by a crash is skipped)."""
        trials: dict[int, TrialRecord] = {}
        if not self.path.exists():
            return trials
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            number = entry.get("trial")
            if entry.get("event") == "trial_started":
                trials[number] = TrialRecord(
                    number=number, params=entry["params"], state="running", started=entry["time"]
                )
            elif number in trials:
                _replay(trials[number], entry)
        return trials


def _replay(record: TrialRecord, entry: dict[str, Any]) -> None:
    kind = entry.get("event")
    if kind == "trial_evaluated":
        record.curve.append((entry["step"], entry["value"]))
        record.last = entry["value"]
    elif kind == "trial_finished":
        record.state = str(entry["state"])
        record.metric = entry.get("metric")
        record.epoch = entry.get("epoch") or 0
        record.ended = entry["time"]
        record.run_dir = entry.get("run_dir")
        record.error = entry.get("error")
        record.search_stopped = bool(entry.get("search_stopped"))
        record.steps = int(entry.get("steps") or 0)
        record.step_s = entry.get("step_s")
        schedule = entry.get("schedule")
        record.schedule = ev.ScheduleInfo.from_dict(schedule) if schedule else None
        gpu = entry.get("gpu")
        record.gpu = (int(gpu[0]), float(gpu[1])) if gpu else None


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
