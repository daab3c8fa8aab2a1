"""The files a comparison reads, read so that a damaged one is named, never a crash.

A run directory copied by hand, half-synced or edited can hold anything: a binary file, JSON
that is a list where an object belongs, a metric that is a number where Ludwig writes one value
per evaluation. Each reader here returns the shape the comparison needs or raises
:class:`SourceFileError` (a ``ValueError``) that names the file, what is in it, and what
was expected.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "SourceFileError",
    "json_object",
    "metric_tables",
    "ndjson_objects",
    "numbers_or_none",
    "yaml_mapping",
]

#: libyaml's safe loader when PyYAML has it (a rendered config: ~0.1 s less per run compared)
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number"}
_KINDS.update({bool: "true or false", type(None): "null", dict: "an object"})


class SourceFileError(ValueError):
    """A file of a run that a comparison cannot read; the message names it."""


def kind_of(value: object) -> str:
    """``value``'s JSON kind in words ("a list", "a number", ...)."""
    return _KINDS.get(type(value), type(value).__name__)


def _text(path: Path) -> str | None:
    """The file's text, None when it does not exist. Raises ``SourceFileError``."""
    if not path.is_file():
        if path.exists():
            raise SourceFileError(f"{path}: is a directory, not a file")
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceFileError(
            f"{path}: not text (byte {exc.start} is not UTF-8): not a file a run writes"
        ) from None
    except OSError as exc:
        raise SourceFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` (None when there is no file).

    Raises ``SourceFileError`` for a file that is not JSON or not an object.
    """
    text = _text(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceFileError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise SourceFileError(f"{path}: {kind_of(data)}, where a JSON object belongs")
    return data


def yaml_mapping(path: Path) -> dict[str, Any]:
    """The YAML mapping in ``path`` (``{}`` for an empty file or none).

    Raises ``SourceFileError`` for a file that is not YAML or not a mapping.
    """
    text = _text(path)
    if not text:
        return {}
    try:
        data = yaml.load(text, Loader=_LOADER)  # a safe loader (libyaml or PyYAML)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SourceFileError(f"{path}: not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SourceFileError(f"{path}: {kind_of(data)}, where a config (a mapping) belongs")
    return data


def ndjson_objects(lines: list[object], path: Path) -> list[dict[str, Any]]:
    """The objects among an event log's decoded lines.

    Raises ``SourceFileError`` when the log has lines and none of them is an object: not an
    event log (a torn last line or a stray one among events is skipped).
    """
    objects = [line for line in lines if isinstance(line, dict)]
    if lines and not objects:
        raise SourceFileError(
            f"{path}: holds no event (no line is a JSON object): not an event log"
        )
    return objects


def numbers_or_none(values: object, path: Path, where: str) -> tuple[float | None, ...]:
    """``values`` as a tuple of numbers (None for null or non-finite).

    Raises ``SourceFileError`` naming ``where`` in ``path`` for anything but a list of those.
    """
    if not isinstance(values, list):
        raise SourceFileError(
            f"{path}: {where} is {kind_of(values)}, where a list of numbers belongs "
            "(one value per evaluation)"
        )
    out: list[float | None] = []
    for value in values:
        if value is None:
            out.append(None)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out.append(float(value) if math.isfinite(value) else None)
        else:
            raise SourceFileError(f"{path}: {where} holds {kind_of(value)}, not a number")
    return tuple(out)


def metric_tables(
    stats: Mapping[str, Any], path: Path, splits: tuple[str, ...]
) -> dict[tuple[str, str, str], tuple[float | None, ...]]:
    """``{(split, feature, metric): values}`` of Ludwig's ``training_statistics.json``.

    Raises ``SourceFileError`` naming the first part that is not split -> feature -> metric ->
    list of numbers.
    """
    out = {}
    for split in splits:
        features = stats.get(split)
        if features is None:
            continue
        if not isinstance(features, dict):
            raise SourceFileError(f"{path}: {split} is {kind_of(features)}, not an object")
        for feature, metrics in features.items():
            if not isinstance(metrics, dict):
                where = f"{split}.{feature}"
                raise SourceFileError(f"{path}: {where} is {kind_of(metrics)}, not an object")
            for metric, values in metrics.items():
                where = f"{split}.{feature}.{metric}"
                out[(split, str(feature), str(metric))] = numbers_or_none(values, path, where)
    return out
