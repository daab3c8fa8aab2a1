"""Dataset sources: a DataFrame, a file path (CSV, TSV, Parquet, JSON, JSONL) or a dict of splits.

:func:`check_dataset` is what the run layer calls in the main thread before any thread
starts: it loads the data and checks the columns the config names, cheaply, so that a
typo fails at once with a located one-line :class:`DataError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ludwig_nb.data.errors import DataError
from ludwig_nb.data.sources import (
    READABLE_SUFFIXES,
    check_split_names,
    missing_column,
    table_path,
)
from ludwig_nb.data.splits import split_dataset

__all__ = [
    "TABLE_SUFFIXES",
    "Dataset",
    "check_columns",
    "check_dataset",
    "load_dataset",
    "load_table",
]

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
TABLE_SUFFIXES = READABLE_SUFFIXES


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
    path, kind = table_path(source)
    reader = _READERS[kind]
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
        check_split_names(dataset)
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


def _check_columns(
    config: Mapping[str, Any], frame: pd.DataFrame, where: str, outputs: bool = True
) -> None:
    error = missing_column(config, [str(c) for c in frame.columns], where, outputs)
    if error is not None:
        raise error


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
    from ludwig_nb.data.value_checks import check_column_names, check_values, warn_surprises

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

    ``dataset`` is a DataFrame, a path or a dict of splits; its rows are not loaded: files are read
    to their header only, so an engine that loads and splits data in its own thread keeps the kernel
    free. ``outputs=False`` checks the input columns only (prediction). Raises :class:`DataError`.
    """
    sources = dataset if isinstance(dataset, Mapping) else {None: dataset}
    for name, source in sources.items():
        if source is None:
            continue
        frame = _header(source)
        if frame is not None:
            where = _describe(source) + (f" ({name} split)" if name else "")
            _check_columns(config, frame, where, outputs)
