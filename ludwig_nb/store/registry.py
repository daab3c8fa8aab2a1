"""The run registry: one small JSON pointer file per live or recent run.

``<registry dir>/<run id>.json`` holds ``{"run_id", "name", "directory", "pid", "kernel",
"notebook", "started_at"}``. The registry directory is ``<jupyter runtime dir>/ludwig_nb/runs``;
callers resolve it (``jupyter_core`` is not imported here, to keep ``store`` on the standard
library). The Jupyter server finds runs through it, never by scanning the disk.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ludwig_nb.store.rundir import is_valid_run_id, read_json, write_json_atomic

__all__ = [
    "iter_registry",
    "pid_alive",
    "prune_registry",
    "register_run",
    "registry_dir",
    "registry_entry",
    "unregister_run",
]


def registry_dir(runtime_dir: Path) -> Path:
    """The run registry under a Jupyter runtime directory: ``<runtime_dir>/ludwig_nb/runs``.

    Callers pass ``jupyter_core.paths.jupyter_runtime_dir()`` (which honours
    ``JUPYTER_RUNTIME_DIR``); ``store`` stays on the standard library.
    """
    return Path(runtime_dir) / "ludwig_nb" / "runs"


def registry_entry(
    run_id: str,
    name: str,
    directory: Path,
    pid: int,
    started_at: float,
    kernel: str | None = None,
    notebook: str | None = None,
) -> dict[str, object]:
    """Build a run's registry entry (what the sidebar and ``%ludwig_runs`` list).

    ``started_at`` is wall-clock seconds; ``kernel`` and ``notebook`` are None outside Jupyter.
    """
    return {
        "run_id": run_id,
        "name": name,
        "directory": str(directory),
        "pid": pid,
        "kernel": kernel,
        "notebook": notebook,
        "started_at": started_at,
    }


def register_run(registry_dir: Path, entry: Mapping[str, object]) -> Path:
    """Write ``entry`` atomically as ``<registry_dir>/<run_id>.json`` and return that path.

    Raises:
        ValueError: ``entry["run_id"]`` is not a valid run id (it would escape the directory).
        OSError: The file could not be written.
    """
    run_id = str(entry["run_id"])
    if not is_valid_run_id(run_id):
        raise ValueError(f"invalid run id {run_id!r}")
    path = registry_dir / f"{run_id}.json"
    write_json_atomic(path, entry)
    return path


def unregister_run(registry_dir: Path, run_id: str) -> None:
    """Remove the run's registry entry; a missing entry or an invalid id is ignored."""
    if is_valid_run_id(run_id):
        with contextlib.suppress(OSError):
            (registry_dir / f"{run_id}.json").unlink()


def iter_registry(registry_dir: Path) -> Iterator[dict[str, Any]]:
    """Every readable registry entry, newest first."""
    try:
        paths = list(registry_dir.glob("*.json"))
    except OSError:
        return
    entries = [
        e for e in (read_json(p) for p in paths) if e and is_valid_run_id(str(e.get("run_id", "")))
    ]
    entries.sort(key=_time_of, reverse=True)
    yield from entries


def _time_of(entry: Mapping[str, object]) -> float:
    """``started_at`` as seconds; 0 for an entry whose value is not a number."""
    value = entry.get("started_at")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


def _pid_of(entry: Mapping[str, object]) -> int:
    value = entry.get("pid")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def prune_registry(
    registry_dir: Path, now: float, max_age_s: float = 7 * 86400.0, keep: int = 200
) -> list[str]:
    """Forget finished runs.

    Drop entries whose process is gone and that started more than ``max_age_s`` seconds before
    ``now``, then the oldest dead ones beyond ``keep``. Entries of live processes stay; run
    directories are never touched. Returns the ids removed.
    """
    entries = list(iter_registry(registry_dir))  # newest first
    dead = [e for e in entries if not pid_alive(_pid_of(e))]
    old = {e["run_id"] for e in dead if now - _time_of(e) > max_age_s}
    extra = max(0, len(entries) - len(old) - keep)
    recent_dead = [e["run_id"] for e in dead if e["run_id"] not in old]
    over = set(recent_dead[len(recent_dead) - extra :]) if extra else set()
    removed = sorted(old | over)
    for run_id in removed:
        unregister_run(registry_dir, run_id)
    return removed


def pid_alive(pid: int) -> bool:
    """True if a process with ``pid`` exists (on this host)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or no pid this large can exist
        return False
    except PermissionError:
        return True
    return True
