"""What can be checked of a dataset before it is read, without pandas: the cell's cheap check.

A ``%%ludwig_config`` cell (and ``train()``) checks here, on the caller's thread and in
milliseconds, that the dataset is something a run can read: a DataFrame, a ``demo:NAME``,
an existing file of a known type, or a dict of splits of those; and, where the column names
come cheaply (a DataFrame's columns, a plain CSV/TSV file's first line), that every feature
column exists. The read itself, the value checks and preprocessing come later, on the
training thread, while the dashboard is up (``loading.check_dataset``). Raises
:class:`DataError` with the same one-line messages as the full check.
"""

from __future__ import annotations

import csv
import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ludwig_nb.data.demo import DEMO_PREFIX, demo_dataset
from ludwig_nb.data.errors import DataError

__all__ = [
    "READABLE_SUFFIXES",
    "SPLIT_NAMES",
    "check_source",
    "check_split_names",
    "missing_column",
    "source_label",
    "table_path",
]

#: The split names Ludwig uses, in order.
SPLIT_NAMES = ("training", "validation", "test")

#: file types a dataset may have (a trailing .gz, .bz2, .zip or .xz is allowed)
READABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".json", ".jsonl")
_COMPRESSED = (".gz", ".bz2", ".zip", ".xz")
_DEMO_DIR = demo_dataset("churn").parent


def _is_frame(source: Any) -> bool:
    # a DataFrame exists only where pandas is loaded; another thread may be importing it
    # now (the warm-up, a run's read): then it has no DataFrame yet, and neither has the user
    frame_type = getattr(sys.modules.get("pandas"), "DataFrame", None)
    return isinstance(frame_type, type) and isinstance(source, frame_type)


def table_path(source: str | Path) -> tuple[Path, str]:
    """The file a path or ``"demo:NAME"`` names, and its type (``".csv"``...).

    Raises:
        DataError: An unknown demo name (the demos are listed), an unknown file type, or no
            such file.
    """
    if isinstance(source, str) and source.startswith(DEMO_PREFIX):
        source = demo_dataset(source.removeprefix(DEMO_PREFIX).strip())
    path = Path(source).expanduser()
    if path.is_dir():
        raise DataError(_directory_message(path))
    kind = _kind_of(path)
    if kind not in READABLE_SUFFIXES:
        known = ", ".join(sorted(READABLE_SUFFIXES))
        raise DataError(f"{path}: unknown file type {kind or '(none)'!r}; use one of {known}")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    return path, kind


def _directory_message(path: Path) -> str:
    """A dataset path that is a directory: say so, and name the tables in it."""
    try:
        tables = sorted(
            p.name for p in path.iterdir() if p.is_file() and _kind_of(p) in READABLE_SUFFIXES
        )
    except OSError:
        tables = []
    shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
    where = f" (it holds {shown})" if tables else ""
    return f"{path}: is a directory, not a table file: pass one of its files{where}"


def _kind_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def source_label(source: Any) -> str:
    """How progress lines name a dataset: ``"demo:churn"``, ``"sales.csv"``, ``"the DataFrame"``."""
    if isinstance(source, Mapping):
        return source_label(source.get("training"))
    if isinstance(source, str | Path):
        text = str(source)
        if text.startswith(DEMO_PREFIX):
            return text
        path = Path(text).expanduser()
        if path.parent.resolve() == _DEMO_DIR and path.suffix == ".csv":
            return f"{DEMO_PREFIX}{path.stem}"
        return path.name or text
    return "the DataFrame" if _is_frame(source) else "the dataset"


def check_split_names(dataset: Mapping[str, Any]) -> None:
    """A dict of splits names known splits and has a training split; raises :class:`DataError`."""
    unknown = sorted(set(dataset) - set(SPLIT_NAMES))
    if unknown:
        raise DataError(
            f"unknown split name(s) {', '.join(map(repr, unknown))}; use {', '.join(SPLIT_NAMES)}"
        )
    if "training" not in dataset:
        raise DataError("a dict of splits needs a 'training' entry")


def _feature_columns(config: Mapping[str, Any], outputs: bool) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for role in ("input_features", "output_features")[: 2 if outputs else 1]:
        for feature in config.get(role) or []:
            out.append((role, str(feature.get("column") or feature["name"])))
    return out


def missing_column(
    config: Mapping[str, Any], columns: Sequence[str], where: str, outputs: bool = True
) -> DataError | None:
    """The error for the first feature (or split) column of ``config`` not in ``columns``.

    None when all are there. ``where`` names the table in the message; ``outputs=False``
    checks the inputs only (prediction).
    """
    existing = [str(c) for c in columns]
    present = set(existing)
    wanted = _feature_columns(config, outputs)
    if existing and not any(column in present for _, column in wanted):
        return _not_this_table(where, existing, [c for _, c in wanted])
    for role, column in wanted:
        if column in present:
            continue
        close = difflib.get_close_matches(column, existing, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        kind = "input" if role == "input_features" else "output"
        return DataError(
            f"{where}: {kind} column {column!r} not found{hint} (columns: {_shown(existing)})"
        )
    split = (config.get("preprocessing") or {}).get("split") or {}
    by = split.get("column")
    if split.get("type") in ("fixed", "stratify") and by and by not in present:
        return DataError(f"{where}: split column {split['column']!r} not found")
    return None


#: the longest column name an error shows whole (characters)
_SHOWN_NAME = 40


def _shown(names: Sequence[str]) -> str:
    """Column names for an error: the first 20, each printable and cut to 40 characters."""
    out = []
    for name in names[:20]:
        text = "".join(ch if ch.isprintable() else "?" for ch in name)
        out.append(text if len(text) <= _SHOWN_NAME else text[: _SHOWN_NAME - 1] + "…")
    return ", ".join(out) + (", ..." if len(names) > 20 else "")


def _not_this_table(where: str, existing: list[str], wanted: list[str]) -> DataError:
    """None of the config's columns is in the table's header: it may not be the table at all.

    Its first line is not shown (a file that is not a table may hold anything, a password
    file's line included); a close match to a column the config names is.
    """
    for column in wanted:
        close = difflib.get_close_matches(column, existing, n=1, cutoff=0.6)
        if close:
            return DataError(
                f"{where}: input column {column!r} not found; did you mean {_shown(close)!r}? "
                "(none of the config's columns is in the table's header)"
            )
    names = ", ".join(repr(c) for c in wanted[:5]) + (", ..." if len(wanted) > 5 else "")
    count = f"{len(existing)} column{'s' if len(existing) != 1 else ''}"
    return DataError(
        f"{where}: none of the config's columns ({names}) is in its header (its first line: "
        f"{count}, not shown): is it the table you meant? A table's first line names its columns"
    )


def _cheap_columns(source: Any) -> list[str] | None:
    """The column names, where they come without reading the table; else None."""
    if _is_frame(source):
        return [str(c) for c in source.columns]
    path, kind = table_path(source)
    if kind not in (".csv", ".tsv") or path.suffix.lower() in _COMPRESSED:
        return None
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle, delimiter="\t" if kind == ".tsv" else ","), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return None  # the full read reports it, worded for the file
    if not header:
        raise DataError(f"{path}: is empty (no header line naming the columns)")
    if len(set(header)) != len(header):
        return None  # pandas renames repeated names ("a.1"): leave them to the full check
    return header


def _check_one(config: Mapping[str, Any], source: Any, where: str | None) -> None:
    if not (_is_frame(source) or isinstance(source, str | Path)):
        return  # the engine's own read says what it takes (a search hands its trials refs)
    columns = _cheap_columns(source)
    if columns is not None:
        label = str(source) if isinstance(source, str | Path) else "the dataset"
        error = missing_column(config, columns, label + (f" ({where} split)" if where else ""))
        if error is not None:
            raise error


def check_source(config: Mapping[str, Any], dataset: Any) -> None:
    """Check ``dataset`` for ``config`` without reading its rows (milliseconds, no pandas).

    ``dataset``: a DataFrame, a path, ``"demo:NAME"`` or a dict of splits of those.

    Anything else is left to the engine's read, which words what it takes.

    Raises:
        DataError: An unknown demo or split name, an unknown file type, a missing file, or a
            feature column that a DataFrame or a CSV/TSV header lacks.
    """
    if isinstance(dataset, Mapping):
        check_split_names(dataset)
        for name, source in dataset.items():
            if source is not None:
                _check_one(config, source, name)
        return
    _check_one(config, dataset, None)
