"""Making a run's directory and registry entry, with OS errors said in one line.

A results directory that is a file, read-only or full, or a Jupyter runtime directory
that cannot be written, is a :class:`RunDirectoryError` naming the path and the fix, and
nothing half-made is left behind (:func:`undo` removes what :func:`make_run_directory`
created).
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

__all__ = ["RunDirectoryError", "explain", "make_run_directory", "undo"]

_FIXES = {
    "results": "pass another results_dir (train(results_dir=...), %%ludwig_config "
    "--results-dir, or %config LudwigMagics.results_dir = '...')",
    "registry": "set JUPYTER_RUNTIME_DIR to a writable directory before starting the kernel",
}


class RunDirectoryError(OSError):
    """A run directory or registry entry could not be written.

    The message names the path, what the system said and what to do (``errno`` is the system's).
    """

    def __str__(self) -> str:  # the message alone, without OSError's "[Errno 13]"
        return str(self.strerror)


def _blocking_file(path: Path) -> Path | None:
    """The first component of ``path`` that exists and is not a directory."""
    for part in [*reversed(path.parents), path]:
        if part.exists() and not part.is_dir():
            return part
    return None


def explain(err: OSError, path: Path, kind: str) -> RunDirectoryError:
    """One line for ``err`` raised while writing under ``path``.

    ``kind`` is "results" (the results directory) or "registry" (the Jupyter runtime directory's run
    registry).
    """
    what = "results directory" if kind == "results" else "run registry"
    fix = _FIXES[kind]
    blocker = _blocking_file(path)
    if blocker is not None or err.errno in (errno.ENOTDIR, errno.EEXIST):
        where = blocker or path
        message = f"cannot use {where} as the {what}: it is a file, not a directory; {fix}"
    elif err.errno == errno.ENOSPC:
        message = f"cannot write the {what} {path}: no space left on the device; free some"
    elif err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "read-only file system" if err.errno == errno.EROFS else "permission denied"
        message = f"cannot write the {what} {path}: {reason}; {fix}"
    else:
        message = f"cannot write the {what} {path}: {err.strerror or err}; {fix}"
    return RunDirectoryError(err.errno or 0, message)


def make_run_directory(results_dir: Path, run_id: str) -> tuple[Path, Path | None]:
    """Create ``<results_dir>/<run_id>``.

    Returns it and the topmost directory this call created (for :func:`undo`). Raises
    :class:`RunDirectoryError`.
    """
    directory = results_dir / run_id
    created = next((p for p in [*reversed(directory.parents), directory] if not p.exists()), None)
    try:
        directory.mkdir(parents=True, exist_ok=False)
    except OSError as err:
        raise explain(err, results_dir, "results") from err
    return directory, created


def undo(created: Path | None) -> None:
    """Remove what :func:`make_run_directory` created (best effort)."""
    if created is not None:
        shutil.rmtree(created, ignore_errors=True)
