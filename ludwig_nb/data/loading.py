"""Dataset sources: a DataFrame, a file path (CSV, TSV, Parquet, JSON, JSONL) or a dict of splits.

:func:`check_dataset` is what the run layer calls in the main thread before any thread
starts: it loads the data and checks the columns the config names, cheaply, so that a
typo fails at once with a located one-line :class:`DataError`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ludwig_nb.data.demo import DEMO_PREFIX, demo_dataset
from ludwig_nb.data.errors import DataError

__all__ = [
    "SPLIT_NAMES",
    "TABLE_SUFFIXES",
    "Dataset",
    "check_columns",
    "check_dataset",
    "load_dataset",
    "load_table",
]

#: The split names Ludwig uses, in order.
SPLIT_NAMES = ("training", "validation", "test")

#: A loaded dataset: one frame, or frames per split name.
Dataset = pd.DataFrame | dict[str, pd.DataFrame]

_READERS: dict[str, Callable[[Path], pd.DataFrame]] = {
    ".csv": pd.read_csv,
    ".tsv": lambda p: pd.read_csv(p, sep="\t"),
    ".parquet": pd.read_parquet,
    ".json": pd.read_json,
    ".jsonl": lambda p: pd.read_json(p, lines=True),
}

#: file types :func:`load_table` reads (a trailing .gz, .bz2, .zip or .xz is allowed)
TABLE_SUFFIXES = tuple(_READERS)


def load_table(source: Any) -> pd.DataFrame:
    """Load one table from a DataFrame, a path or ``"demo:NAME"`` (a bundled demo dataset).

    Raises :class:`DataError` when it cannot (an unknown demo name lists the demos).
    """
    if isinstance(source, pd.DataFrame):
        return source
    if not isinstance(source, str | Path):
        raise DataError(
            f"dataset must be a DataFrame, a path or a dict of splits, not {type(source).__name__}"
        )
    if isinstance(source, str) and source.startswith(DEMO_PREFIX):
        source = demo_dataset(source.removeprefix(DEMO_PREFIX).strip())
    path = Path(source).expanduser()
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".zip", ".xz"):
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    reader = _READERS.get(kind)
    if reader is None:
        known = ", ".join(sorted(_READERS))
        raise DataError(f"{path}: unknown file type {kind or '(none)'!r}; use one of {known}")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        frame = reader(path)
    except ImportError as err:
        raise DataError(f"{path}: cannot read {kind} files here ({err})") from err
    except Exception as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"{path}: unreadable as {kind[1:].upper()} ({reason})") from err
    if not isinstance(frame, pd.DataFrame):  # pd.read_json can return a Series
        raise DataError(f"{path}: does not hold a table")
    return frame


def load_dataset(dataset: Any) -> Dataset:
    """Load a DataFrame, a path or ``{"training": ..., "validation": ..., "test": ...}``.

    Raises :class:`DataError` for unknown split names, unreadable files or empty tables.
    """
    if isinstance(dataset, Mapping):
        unknown = sorted(set(dataset) - set(SPLIT_NAMES))
        if unknown:
            raise DataError(
                f"unknown split name(s) {', '.join(map(repr, unknown))}; "
                f"use {', '.join(SPLIT_NAMES)}"
            )
        if "training" not in dataset:
            raise DataError("a dict of splits needs a 'training' entry")
        frames = {name: load_table(src) for name, src in dataset.items() if src is not None}
        for name, frame in frames.items():
            if frame.empty:
                raise DataError(f"the {name} split is empty")
        return frames
    frame = load_table(dataset)
    if frame.empty:
        raise DataError(f"{_describe(dataset)} is empty (no rows)")
    return frame


def _describe(source: Any) -> str:
    return str(source) if isinstance(source, str | Path) else "the dataset"


def _feature_columns(config: Mapping[str, Any], outputs: bool = True) -> list[tuple[str, str]]:
    """``(role, column)`` for every feature of the config (inputs only unless ``outputs``)."""
    out: list[tuple[str, str]] = []
    for role in ("input_features", "output_features")[: 2 if outputs else 1]:
        for feature in config.get(role) or []:
            out.append((role, str(feature.get("column") or feature["name"])))
    return out


def _check_columns(
    config: Mapping[str, Any], frame: pd.DataFrame, where: str, outputs: bool = True
) -> None:
    existing = [str(c) for c in frame.columns]
    for role, column in _feature_columns(config, outputs):
        if column in frame.columns:
            continue
        close = difflib.get_close_matches(column, existing, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        shown = ", ".join(existing[:20]) + (", ..." if len(existing) > 20 else "")
        kind = "input" if role == "input_features" else "output"
        raise DataError(f"{where}: {kind} column {column!r} not found{hint} (columns: {shown})")
    split = (config.get("preprocessing") or {}).get("split") or {}
    by = split.get("column")
    if split.get("type") in ("fixed", "stratify") and by and by not in frame.columns:
        raise DataError(f"{where}: split column {split['column']!r} not found")


def _check_targets(config: Mapping[str, Any], frame: pd.DataFrame, where: str) -> None:
    for feature in config.get("output_features") or []:
        if feature.get("type") not in ("binary", "category"):
            continue
        column = str(feature.get("column") or feature["name"])
        values = frame[column].dropna().unique()
        if len(values) < 2:
            raise DataError(
                f"{where}: output {column!r} has a single class ({values[0]!r} only); "
                "a classifier needs at least two"
                if len(values)
                else f"{where}: output {column!r} has no values"
            )


def check_dataset(config: Mapping[str, Any], dataset: Any) -> Dataset:
    """Load ``dataset`` and check it against ``config`` (a rendered Ludwig config dict).

    Cheap: loads the table(s) and checks that every feature column exists, that number
    columns hold numbers, that every binary/category output has at least two classes
    and that no split would be empty. Returns the loaded dataset, which the engine accepts as
    ``TrainJob.dataset``. Raises :class:`DataError`.
    """
    from ludwig_nb.data.preprocessing import check_values
    from ludwig_nb.data.value_checks import check_column_names, warn_surprises

    loaded = load_dataset(dataset)
    if isinstance(loaded, dict):
        for name, given in list(loaded.items()):
            where = f"{_describe(dataset.get(name))} ({name} split)"
            loaded[name] = frame = check_column_names(given, where)
            _check_columns(config, frame, where)
            check_values(config, frame)
        _check_targets(config, loaded["training"], "training split")
        warn_surprises(config, loaded["training"], "training split")
    else:
        loaded = check_column_names(loaded, _describe(dataset))
        _check_columns(config, loaded, _describe(dataset))
        check_values(config, loaded)
        _check_targets(config, loaded, _describe(dataset))
        warn_surprises(config, loaded, _describe(dataset))
        from ludwig_nb.data.splits import split_dataset

        split_dataset(loaded, config.get("preprocessing") or {}, seed=0)  # empty splits
    return loaded


_HEADER_READERS: dict[str, Callable[[Path], pd.DataFrame]] = {
    ".csv": lambda p: pd.read_csv(p, nrows=0),
    ".tsv": lambda p: pd.read_csv(p, sep="\t", nrows=0),
    ".jsonl": lambda p: pd.read_json(p, lines=True, nrows=1),
}


def _header(source: Any) -> pd.DataFrame | None:
    """The columns of a table without its rows.

    A frame as is, a CSV/TSV/JSONL file's first line, a Parquet file's schema; None for a format
    read only by the engine itself.
    """
    if isinstance(source, pd.DataFrame):
        return source
    if not isinstance(source, str | Path):
        raise DataError(
            f"dataset must be a DataFrame, a path or a dict of splits, not {type(source).__name__}"
        )
    path = Path(source).expanduser()
    if not path.exists():
        raise DataError(f"{path}: no such file")
    kind = path.suffix.lower()
    try:
        if kind == ".parquet":
            import pyarrow.parquet as pq

            return pd.DataFrame(columns=pq.read_schema(path).names)
        reader = _HEADER_READERS.get(kind)
        return reader(path) if reader is not None else None
    except ImportError:
        return None
    except Exception as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"{path}: unreadable as {kind[1:].upper()} ({reason})") from err


def check_columns(config: Mapping[str, Any], dataset: Any, *, outputs: bool = True) -> None:
    """Check that every feature column of ``config`` exists in ``dataset``.

    Check that every feature column of ``config`` exists in ``dataset`` (a DataFrame, a path or a
    dict of splits) without loading the rows: files are read to their header only, so an engine that
    loads and splits data in its own thread keeps the kernel free. ``outputs=False`` checks the
    input columns only (prediction). Raises :class:`DataError`.
    """
    sources = dataset if isinstance(dataset, Mapping) else {None: dataset}
    for name, source in sources.items():
        if source is None:
            continue
        frame = _header(source)
        if frame is not None:
            where = _describe(source) + (f" ({name} split)" if name else "")
            _check_columns(config, frame, where, outputs)
