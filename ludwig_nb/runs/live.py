"""The runs of this process: what ``%ludwig_runs``, ``%ludwig_stop --all`` and the alarms see."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ludwig_nb.runs.run import Run

__all__ = ["active_runs", "add_run", "all_runs", "find_run", "remove_run"]

_lock = threading.Lock()
_runs: list[Run] = []


def add_run(run: Run) -> None:
    """Record ``run`` as one of this process's runs."""
    with _lock:
        _runs.append(run)


def remove_run(run: Run) -> None:
    """Forget ``run`` (one whose data failed its check: to the user it never existed)."""
    with _lock:
        if run in _runs:
            _runs.remove(run)


def all_runs() -> list[Run]:
    """This process's runs, oldest first."""
    with _lock:
        return list(_runs)


def active_runs() -> list[Run]:
    """This process's runs that have not ended, oldest first."""
    return [r for r in all_runs() if r.is_active]


def find_run(name_or_id: str) -> Run | None:
    """The newest run of this process whose name or id matches."""
    for run in reversed(all_runs()):
        if name_or_id in (run.name, run.id):
            return run
    return None
