"""The one rule for the names users give runs and searches: a name is a folder's name.

A run's or a search's directory is ``<results_dir>/<name...>``, so a name keeps only letters,
digits, ``_``, ``.`` and ``-`` (anything else becomes ``-``), never starts or ends with ``.`` or
``-`` (``..`` cannot climb out of the results directory) and is at most 60 characters. The API,
the magics and the CLI all go through :func:`safe_name`.
"""

from __future__ import annotations

import re

__all__ = ["MAX_NAME", "safe_name"]

#: the longest name kept (characters)
MAX_NAME = 60
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(name: str, default: str = "run") -> str:
    """``name`` reduced to safe characters; ``default`` when nothing is left.

    ``"../../x"`` -> ``"x"``, ``"my run"`` -> ``"my-run"``, ``"/"`` -> ``default``.
    """
    slug = _UNSAFE.sub("-", str(name)).strip("-.")[:MAX_NAME].strip("-.")
    return slug or default
