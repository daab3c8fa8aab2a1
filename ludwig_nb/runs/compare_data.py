"""Whether compared runs trained on the same data: by content first, then by name.

A ludwig_nb run records its dataset's content fingerprint when it reads it
(``data/fingerprint.py``) and names its file with an absolute path; a Ludwig output
directory names the file as it was given. Two runs differ when both recorded a fingerprint
and the fingerprints differ; without a fingerprint on both sides, when both named a file and
the names cannot be the same file: a relative name matches an absolute path that ends with
it (``x.csv``, ``./x.csv`` and ``/data/x.csv``), and two files still on disk with the same
bytes are the same data (a copy). A run that recorded neither (a table in memory read
elsewhere) is compared with no one.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

__all__ = ["dataset_label", "datasets_differ"]

_CHUNK = 1 << 20  # bytes read at a time when two files' contents are compared


def datasets_differ(facts: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any two runs (each ``RunRecord.facts``) are known to have read different data."""
    return any(_differ(a, b) for a, b in itertools.combinations(facts, 2))


def dataset_label(facts: Mapping[str, Any]) -> str:
    """How the warning names a run's data: its file (or "a table in memory") and content."""
    dataset = facts.get("dataset")
    fingerprint = facts.get("fingerprint")
    name = "a table in memory" if dataset is None else str(dataset)
    return f"{name} (content {fingerprint[:8]})" if fingerprint else name


def _differ(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    fa, fb = a.get("fingerprint"), b.get("fingerprint")
    if fa and fb:
        return bool(fa != fb)
    da, db = a.get("dataset"), b.get("dataset")
    if da is None or db is None:
        return False
    if isinstance(da, str) and isinstance(db, str):
        return not _same_file(da, db)
    return repr(da) != repr(db)  # a dict of splits: as recorded


def _same_file(a: str, b: str) -> bool:
    """Whether two recorded file names can name the same data."""
    pa, pb = PurePath(os.path.normpath(a)), PurePath(os.path.normpath(b))
    if pa == pb:
        return True
    if not (pa.is_absolute() and pb.is_absolute()):  # as given: relative to an unknown cwd
        short, long = sorted((pa, pb), key=lambda p: len(p.parts))
        return not short.is_absolute() and long.parts[-len(short.parts) :] == short.parts
    return _same_bytes(a, b)


def _same_bytes(a: str, b: str) -> bool:
    """Whether two files on disk hold the same bytes (False when either cannot be read)."""
    try:
        if os.path.samefile(a, b):
            return True
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        return _digest(a) == _digest(b)
    except OSError:
        return False


def _digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
