"""What the CLI says of warnings, OS errors and config files: one line each, no traceback."""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import TextIO

__all__ = ["is_output_error", "os_error_text", "read_config", "show_warning"]

#: what a write to stdout fails with: a full disk or quota, a closed pipe, an I/O error
_OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EPIPE, errno.EIO, errno.EFBIG)


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,  # noqa: ARG001  (warnings.showwarning's signature: where is not said)
    lineno: int,  # noqa: ARG001
    file: TextIO | None = None,
    line: str | None = None,  # noqa: ARG001
) -> None:
    """Print a warning as the CLI's own line (``ludwig-nb: warning: ...``) on stderr.

    A located config warning keeps its place and hint, on the same line; Python's format (the
    source file and line of ludwig_nb's code) is not shown.
    """
    text = str(message).splitlines()[0] if str(message) else category.__name__
    hint = getattr(message, "hint", None)
    if hint:
        text += f" ({hint})"
    print(f"ludwig-nb: warning: {text}", file=file or sys.stderr, flush=True)


def is_output_error(exc: OSError) -> bool:
    """Whether ``exc`` is the command's output failing (no file of the user's named)."""
    return exc.filename is None and exc.errno in _OUTPUT_ERRNOS


def os_error_text(exc: OSError) -> str:
    """``exc`` in one line: the path and what the system said (``[Errno N]`` left out)."""
    if exc.filename is None:
        return str(exc.strerror or exc)
    return f"{exc.filename}: {exc.strerror or exc}"


def read_config(path: Path) -> str:
    """The YAML text of the config file ``path``.

    Raises ``FileNotFoundError`` (missing, or a directory) or ``ValueError`` (not text), each
    naming the path.
    """
    if path.is_dir():
        raise FileNotFoundError(f"config file {path} is a directory: pass the YAML file in it")
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"config file {path} is not text (byte {exc.start})") from None
