"""The run directory: file names, atomic writes, the event log on disk, control requests.

Layout of one run (see ARCHITECTURE.md)::

    <results root>/<run id>/
      config.yaml  events.ndjson  status.json  control.json
      checkpoints/  model/  training_statistics.json  system_resource_usage.json

Everything here is plain file I/O, shared by the kernel (writer) and the Jupyter
server (reader), so it never imports anything heavy.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

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
    "read_events",
    "read_json",
    "request_control",
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
