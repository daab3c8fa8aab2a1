"""Where a run's deadline comes from: its config, the kernel, the environment, or Colab.

In order (``gpu_watch.deadline.at: auto``): the kernel's deadline (``%gpu_watch --deadline``),
``$LUDWIG_NB_DEADLINE`` (a date and time, a clock time or seconds since the epoch: how a
cloud instance's scheduled stop is handed on, e.g. from its startup script), and in Colab the
runtime's session limit counted from when the runtime's machine started. Colab publishes no
remaining time (colabtools#676); its FAQ gives runtimes "as much as 12 hours", so the limit
is the config's ``session_limit`` (12 h; Colab Pro users set 24h) after the machine's boot
time read from ``/proc/uptime``: an upper bound, since a runtime can be recycled earlier.

Time and the environment are parameters; nothing is read at import.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ludwig_nb.core.deadline import Deadline, parse_deadline

__all__ = [
    "ENV_VAR",
    "clear_kernel_deadline",
    "colab_session_end",
    "in_colab",
    "kernel_deadline",
    "resolve_deadline",
    "set_kernel_deadline",
]

log = logging.getLogger(__name__)

ENV_VAR = "LUDWIG_NB_DEADLINE"
_kernel: list[tuple[float, str] | None] = [None]  # (resolved time, what was written)
_kernel_lock = threading.Lock()


def set_kernel_deadline(text: str, now: float, tz: dt.tzinfo | None = None) -> float:
    """Give every later run of this kernel a deadline (``%gpu_watch --deadline``).

    A duration counts from ``now`` (s). Returns the deadline (wall-clock s); raises
    ``ValueError`` (one line) for bad text.
    """
    at = parse_deadline(text).resolve(now, tz)
    with _kernel_lock:
        _kernel[0] = (at, text)
    return at


def clear_kernel_deadline() -> None:
    """Forget the kernel's deadline."""
    with _kernel_lock:
        _kernel[0] = None


def kernel_deadline() -> tuple[float, str] | None:
    """The kernel's deadline (wall-clock s, as written), or None."""
    with _kernel_lock:
        return _kernel[0]


def in_colab() -> bool:
    """Whether this kernel runs in Google Colab (``google.colab`` is importable)."""
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def colab_session_end(now: float, limit_s: float, proc: Path = Path("/proc")) -> float | None:
    """When a Colab runtime started ``limit_s`` seconds ago at most must end; None if unknown.

    The runtime's machine started ``/proc/uptime`` seconds before ``now``.
    """
    try:
        uptime = float((proc / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return now - uptime + limit_s


def _from_env(value: str, now: float, tz: dt.tzinfo | None) -> float | None:
    try:
        return float(value)  # seconds since the epoch
    except ValueError:
        pass
    try:
        return parse_deadline(value).resolve(now, tz)
    except ValueError:
        log.warning("ludwig_nb: $%s=%r is not a time; no deadline taken from it", ENV_VAR, value)
        return None


def resolve_deadline(
    section: Mapping[str, Any] | None,
    run_start: float,
    *,
    env: Mapping[str, str] | None = None,
    colab: Callable[[], bool] = in_colab,
    proc: Path = Path("/proc"),
    tz: dt.tzinfo | None = None,
) -> Deadline | None:
    """The run's :class:`Deadline` from its rendered ``gpu_watch.deadline`` (None: off).

    ``run_start``: wall-clock seconds a duration in the config counts from.
    """
    if not section:
        return None
    at = str(section.get("at", "auto"))
    found = _find(at, section, run_start, os.environ if env is None else env, colab, proc, tz)
    if found is None:
        return None
    when, label, source = found
    return Deadline(
        at=when,
        label=label,
        action=str(section.get("action", "checkpoint")),
        reserve_s=float(section.get("reserve", 300.0)),
        source=source,
    )


def _find(
    at: str,
    section: Mapping[str, Any],
    run_start: float,
    env: Mapping[str, str],
    colab: Callable[[], bool],
    proc: Path,
    tz: dt.tzinfo | None,
) -> tuple[float, str, str] | None:
    if at not in ("auto", "colab"):
        return parse_deadline(at).resolve(run_start, tz), "your deadline", "config"
    limit = float(section.get("session_limit", 43200.0))
    if at == "auto":
        kernel = kernel_deadline()
        if kernel is not None:
            return kernel[0], "your deadline", "kernel"
        if env.get(ENV_VAR):
            when = _from_env(env[ENV_VAR], run_start, tz)
            if when is not None:
                return when, "the instance's scheduled stop", "environment"
    if not colab():
        if at == "colab":
            log.warning("ludwig_nb: deadline 'colab' outside Colab: no deadline")
        return None
    end = colab_session_end(run_start, limit, proc)
    if end is None:
        return None
    return end, f"Colab's {limit / 3600:g} h session limit", "colab"
