"""One search at a time in a search directory: an OS lock on ``<directory>/search.lock``.

Two searches over one folder would interleave one journal and train the same trials twice, so a
search holds an exclusive ``flock`` on the folder's lock file while it runs. The operating
system releases it when the holder's file closes, the process included (a crash, a killed
kernel), so a stale lock never blocks a resume. The holder writes its process id, host and start
time into the file, for the message the second search gets. Where ``fcntl`` does not exist
(Windows) the folder is not locked.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["LOCK_FILE", "SearchBusyError", "SearchLock"]

LOCK_FILE = "search.lock"


class SearchBusyError(RuntimeError):
    """Another search (this process's or another's) is running in the same directory."""


class SearchLock:
    """The lock of the search directory ``directory`` (not taken until :meth:`acquire`).

    Args:
        directory: the search directory (it exists).
        clock: wall-clock seconds, written as the holder's start.
    """

    def __init__(self, directory: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = directory / LOCK_FILE
        self.directory = directory
        self._clock = clock
        self._file: IO[str] | None = None

    def acquire(self) -> SearchLock:
        """Take the lock and write who holds it; returns the lock.

        Raises:
            SearchBusyError: another search holds it (the message names the folder and who).
            OSError: the lock file cannot be written.
        """
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the folder is not locked
            return self
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read()
            handle.close()
            raise SearchBusyError(self._busy_message(holder)) from None
        except OSError:
            handle.close()
            raise
        handle.seek(0)
        handle.truncate()
        me = {"pid": os.getpid(), "host": socket.gethostname(), "time": self._clock()}
        handle.write(json.dumps(me))
        handle.flush()
        self._file = handle
        return self

    def release(self) -> None:
        """Release the lock (closing the file releases it); safe to call twice."""
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._file is not None

    def _busy_message(self, holder: str) -> str:
        who = "another search"
        try:
            info = json.loads(holder)
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["time"])))
            same = int(info["pid"]) == os.getpid() and info.get("host") == socket.gethostname()
            process = "this process" if same else f"process {info['pid']} on {info['host']}"
            who = f"another search ({process}, since {since})"
        except (ValueError, KeyError, TypeError):
            pass  # the holder has not written itself yet
        return (
            f"the search folder {self.directory} is in use by {who}: two searches would "
            "interleave one journal; wait for it to end or stop it, or pass another name"
        )
