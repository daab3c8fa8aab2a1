"""How a Ray run's data reaches its workers, with no copy in the kernel it does not need.

* A **path** (or a dict of split paths): the kernel reads the files' headers only (the
  columns are checked before any thread starts, :func:`prepare`); the path travels to the
  workers as :class:`PathsOnWorkers` and **every worker reads the whole file itself**, then
  takes its shard of the batch order. Not a byte-range shard per worker: the built-in loop
  splits the table (seeded) and fits the preprocessing (vocabularies, normalisation) on
  the whole training split, and every rank must hold the same metadata and the same split;
  rank 0 also evaluates on the whole validation split. The value checks (numbers,
  classes, empty splits) then run on the workers; a bad value fails the run with the
  worker's ``DataError`` shown. The path must be readable from every node (shared storage).
* A **DataFrame** (or a dict of them): checked in the kernel (the kernel holds it anyway:
  it is the user's), put once into the object store by the driver, and read from there by
  every worker (zero-copy on one node); the driver drops its reference to the checked copy.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["PathsOnWorkers", "prepare", "read_on_worker"]


@dataclasses.dataclass(frozen=True)
class PathsOnWorkers:
    """A dataset the workers read themselves: one absolute path, or split name -> path."""

    source: str | Mapping[str, str]


def _is_path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def _split_paths(value: Any) -> bool:
    """True for a dict of splits that holds paths only."""
    if not isinstance(value, Mapping) or not value:
        return False
    return all(v is None or _is_path(v) for v in value.values())


def _absolute(value: Any) -> str:
    from ludwig_nb.data.demo import DEMO_PREFIX, demo_dataset

    text = os.fspath(value)
    if text.startswith(DEMO_PREFIX):
        text = os.fspath(demo_dataset(text.removeprefix(DEMO_PREFIX).strip()))
    return str(Path(text).expanduser().resolve())


def prepare(config: Mapping[str, Any], dataset: Any) -> Any:
    """What the Ray engine's ``prepare_data`` returns.

    Args:
        config: The rendered config.
        dataset: A DataFrame, a path, or a dict of splits.

    Returns:
        :class:`PathsOnWorkers` for paths (headers checked here), else the checked frames.

    Raises:
        DataError: A missing file or column (and, for frames, a bad value).
    """
    from ludwig_nb.data import check_dataset
    from ludwig_nb.data.loading import check_columns
    from ludwig_nb.engines.builtin.image.feature import prepare_image_columns

    if not (_is_path(dataset) or _split_paths(dataset)):
        # image paths made absolute here (the workers' working folder is not the kernel's);
        # the workers check the images, which need not be on this machine
        return prepare_image_columns(config, check_dataset(config, dataset), dataset, check=False)
    if isinstance(dataset, Mapping):
        source: str | dict[str, str] = {
            k: _absolute(v) for k, v in dataset.items() if v is not None
        }
    else:
        source = _absolute(dataset)
    check_columns(config, source)
    return PathsOnWorkers(source)


def read_on_worker(dataset: Any, config: Mapping[str, Any]) -> Any:
    """On a worker: the table(s) to train on.

    Reads a :class:`PathsOnWorkers` (and runs the value checks the kernel skipped),
    fetches an object-store reference, or passes a frame through.

    Args:
        dataset: What the driver sent.
        config: The rendered config.

    Returns:
        A DataFrame or a dict of them.

    Raises:
        DataError: The file is unreadable or a value is bad.
    """
    from ludwig_nb.engines.builtin.image.feature import prepare_image_columns

    if isinstance(dataset, PathsOnWorkers):
        from ludwig_nb.data import check_dataset

        source = dict(dataset.source) if isinstance(dataset.source, Mapping) else dataset.source
        # image paths relative to the dataset file, every image checked on this worker
        return prepare_image_columns(config, check_dataset(config, source), source)
    if isinstance(dataset, list) and dataset:
        import ray

        if isinstance(dataset[0], ray.ObjectRef):  # a DataFrame travels via the object store
            return read_on_worker(ray.get(dataset[0]), config)
    return prepare_image_columns(config, dataset, None)  # paths absolute already: checked
