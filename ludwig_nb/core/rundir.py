"""The run directory and the run registry: file names, atomic writes, control requests.

Layout of one run (see ARCHITECTURE.md)::

    <results root>/<run id>/
      config.yaml  events.ndjson  status.json  control.json
      checkpoints/  model/  training_statistics.json  system_resource_usage.json

The registry is one small JSON pointer file per run, ``<registry dir>/<run id>.json``,
holding ``{"run_id", "name", "directory", "pid", "kernel", "notebook", "started_at"}``.
The registry directory is ``<jupyter runtime dir>/ludwig_nb/runs``; callers resolve it
(``jupyter_core`` is not imported here, to keep ``core`` on the standard library).

Everything here is plain file I/O, shared by the kernel (writer) and the Jupyter
server (reader), so it never imports anything heavy.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ludwig_nb.core import strict_json

__all__ = [
    "CONFIG_FILE",
    "CONTROL_ACTIONS",
    "CONTROL_FILE",
    "EVENTS_FILE",
    "RUN_ID_PATTERN",
    "STATUS_FILE",
    "consume_control",
    "is_valid_run_id",
    "iter_registry",
    "pid_alive",
    "prune_registry",
    "read_events",
    "read_json",
    "register_run",
    "registry_dir",
    "registry_entry",
    "request_control",
    "unregister_run",
    "write_atomic",
    "write_json_atomic",
]

CONFIG_FILE = "config.yaml"
EVENTS_FILE = "events.ndjson"
STATUS_FILE = "status.json"
CONTROL_FILE = "control.json"
CHECKPOINTS_DIR = "checkpoints"
MODEL_DIR = "model"
CONTROL_ACTIONS = ("stop", "pause", "resume")

#: run ids are ``<name>-<yyyymmdd-hhmmss>-<hex>``: letters, digits, ``-``, ``_``, ``.``
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def is_valid_run_id(run_id: str) -> bool:
    """True for ids that cannot escape a directory (no ``/``, no ``..``)."""
    return bool(RUN_ID_PATTERN.match(run_id)) and ".." not in run_id


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Replace ``path`` in one step.

    ``write(handle)`` fills a temporary file beside it, which then takes its name, so a reader sees
    the old file or the new one, never half of one (a failed write leaves the old file and no
    temporary). Creates the parent folder; returns ``path``. Raises ``OSError`` and whatever
    ``write`` raises.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_json_atomic(path: Path, data: Mapping[str, object]) -> None:
    """Write ``data`` to ``path`` as strict JSON, atomically (:func:`write_atomic`).

    Non-finite numbers are written as ``null`` (see ``core.strict_json``). Raises ``OSError``.
    """
    text = strict_json.dumps(data).encode("utf-8")
    write_atomic(path, lambda handle: handle.write(text))


def read_json(path: Path) -> dict[str, object] | None:
    """The JSON object in ``path``, or None if it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


EVENTS_PAGE_BYTES = 1 << 20  # one reply of events reads at most this much (whole lines)


def read_events(
    path: Path, offset: int = 0, max_bytes: int | None = None
) -> tuple[list[dict[str, object]], int, bool]:
    """Complete event lines from byte ``offset`` on: ``(events, next_offset, more)``.

    At most ``max_bytes`` are read (a single longer line is still returned whole, so a
    reader always advances); ``more`` is true when the file holds bytes past those read:
    call again at once rather than after a polling interval. A half-written last line
    (the writer is mid-flush) is left for the next call.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            chunk = handle.read() if max_bytes is None else handle.read(max_bytes)
            longer = max_bytes is not None and b"\n" not in chunk
            while longer:  # one line longer than the page: read on to its end
                extra = handle.read(max_bytes)
                chunk += extra
                if not extra or b"\n" in extra:
                    break
            rest = b"" if max_bytes is None else handle.read(1)
    except OSError:
        return [], offset, False
    end = chunk.find(b"\n") if longer else chunk.rfind(b"\n")
    if end < 0:
        return [], offset, False
    out: list[dict[str, object]] = []
    for raw in chunk[: end + 1].splitlines():
        with contextlib.suppress(ValueError):
            item = json.loads(raw)
            if isinstance(item, dict):
                out.append(item)
    return out, offset + end + 1, bool(rest) or (longer and end + 1 < len(chunk))


# -- control requests ---------------------------------------------------------------------
def request_control(run_dir: Path, action: str, source: str = "sidebar") -> None:
    """Ask the process training ``run_dir`` to stop, pause or resume (it polls the file)."""
    if action not in CONTROL_ACTIONS:
        raise ValueError(f"action must be one of {CONTROL_ACTIONS}, not {action!r}")
    write_json_atomic(run_dir / CONTROL_FILE, {"action": action, "source": source})


def consume_control(run_dir: Path) -> dict[str, object] | None:
    """Read and remove a pending control request; None when there is none."""
    path = run_dir / CONTROL_FILE
    data = read_json(path)
    if data is None:
        return None
    with contextlib.suppress(OSError):
        path.unlink()
    return data if data.get("action") in CONTROL_ACTIONS else None


# -- registry -----------------------------------------------------------------------------
def registry_dir(runtime_dir: Path) -> Path:
    """The run registry under a Jupyter runtime directory: ``<runtime_dir>/ludwig_nb/runs``.

    Callers pass ``jupyter_core.paths.jupyter_runtime_dir()`` (which honours
    ``JUPYTER_RUNTIME_DIR``); ``core`` stays on the standard library.
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
