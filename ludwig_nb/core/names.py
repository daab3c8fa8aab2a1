"""The one rule for the names users give runs and searches: a name is a folder's name.

A run's or a search's directory is ``<results_dir>/<name...>``, so a name keeps only letters,
digits, ``_``, ``.`` and ``-`` (anything else, and ``..``, becomes one ``-``), starts with a
letter or a digit and never ends with ``.`` or ``-`` (it cannot climb out of the results
directory, and a run id made of it passes the registry's check), and is at most 60 characters.
The API, the magics and the CLI all go through :func:`safe_name`.
"""

from __future__ import annotations

import re

__all__ = ["MAX_NAME", "safe_name"]

#: the longest name kept (characters)
MAX_NAME = 60
_UNSAFE = re.compile(r"(?:[^A-Za-z0-9_.-]|\.\.+)+")
_DASHES = re.compile(r"-{2,}")


def safe_name(name: str, default: str = "run") -> str:
    """``name`` reduced to safe characters; ``default`` when nothing is left.

    ``"../../x"`` -> ``"x"``, ``"my run"`` -> ``"my-run"``, ``"a/../b"`` -> ``"a-b"``,
    ``"/"`` -> ``default``.
    """
    slug = _DASHES.sub("-", _UNSAFE.sub("-", str(name))).lstrip("-._")[:MAX_NAME].rstrip("-.")
    return slug or default
