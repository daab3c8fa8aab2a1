"""Strict JSON: what the project writes is JSON that every parser reads.

Python's ``json`` writes ``NaN``, ``Infinity`` and ``-Infinity`` for non-finite floats;
those tokens are not JSON, and a browser's ``JSON.parse`` rejects the whole document
(one overflowing metric once hid every run from the sidebar). Everything the project
writes (``events.ndjson``, ``status.json``, REST replies) goes through :func:`dumps`,
which writes a non-finite number as ``null`` and never emits a bare token.

Where a reader should know that a ``null`` was a non-finite number, the writer adds the
dotted paths of those values under :data:`NONFINITE_KEY` (``{"nonfinite":
["metrics.validation.y.loss"]}``): the UI shows them as "inf/nan" instead of "missing".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["NONFINITE_KEY", "clean", "dumps", "flagged"]

#: the key under which a document lists the dotted paths of values that were non-finite
NONFINITE_KEY = "nonfinite"


def clean(value: object, path: str = "") -> tuple[Any, list[str]]:
    """Replace every non-finite float in ``value`` by None.

    Returns the cleaned value and the dotted paths of those floats (list items are addressed by
    index). Tuples and sets become lists; numpy scalars become Python numbers. The input is not
    changed.
    """
    found: list[str] = []
    return _clean(value, path, found), found


def _clean(value: object, path: str, found: list[str]) -> object:
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        found.append(path or ".")
        return None
    if isinstance(value, str | int | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _clean(v, f"{path}.{k}" if path else str(k), found) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_clean(v, f"{path}.{i}" if path else str(i), found) for i, v in enumerate(value)]
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        try:
            return _clean(value.item(), path, found)
        except (TypeError, ValueError):
            pass
    return value


def flagged(data: Mapping[str, object]) -> dict[str, object]:
    """Return ``data`` cleaned, with the non-finite paths listed under :data:`NONFINITE_KEY`.

    See :func:`clean`. Paths already listed in ``data`` are kept, so a re-written document keeps
    them. The key is absent when every number was finite.
    """
    cleaned, found = clean({k: v for k, v in data.items() if k != NONFINITE_KEY})
    earlier = data.get(NONFINITE_KEY)
    if isinstance(earlier, list):
        found = [str(p) for p in earlier if str(p) not in found] + found
    if found:
        cleaned[NONFINITE_KEY] = found
    return dict(cleaned)


def dumps(data: object, **kwargs: Any) -> str:
    """``json.dumps`` that never writes ``NaN``/``Infinity``.

    Non-finite floats become ``null`` (callers that want them listed pass :func:`flagged` data).
    Objects JSON does not know are written with ``str``. Raises nothing for non-finite numbers.
    """
    kwargs.setdefault("default", _default)
    try:  # the common case: every number finite, no copy made
        return json.dumps(data, allow_nan=False, **kwargs)
    except ValueError:
        cleaned, _ = clean(data)
        return json.dumps(cleaned, allow_nan=False, **kwargs)


def _default(value: object) -> object:
    """Encode what ``json`` does not know: a numpy/torch scalar as its Python number.

    A float32 metric is then a number, not the text ``"0.5"``; anything else is its ``str``.
    """
    if hasattr(value, "item") and callable(value.item):
        try:
            item = value.item()
        except (TypeError, ValueError):
            return str(value)
        if isinstance(item, int | float | bool):
            return item
    return str(value)
