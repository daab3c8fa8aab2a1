"""One Ray process's prints and log records sent to a file, not to any cell."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

__all__ = ["log_to_file"]


@contextlib.contextmanager
def log_to_file(path: Path) -> Iterator[None]:
    """Send this process's stdout, stderr and root log records to ``path`` (appended).

    Used by Ray Train workers and Tune trials, whose output would otherwise reach the driver's
    cell mixed with Ray's own. Log records carry their time, level and logger.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", buffering=1) as out:
        handler = logging.StreamHandler(out)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                yield
        finally:
            root.removeHandler(handler)
