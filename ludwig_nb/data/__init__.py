"""ludwig_nb.data: dataset sources and loading, splits, value checks, demo datasets, baseline.

Engine-neutral (an engine's own preprocessing is the engine's: engines/builtin/preprocessing/).
Imports pandas and numpy, never torch. The names below load on first use (PEP 562), so that
``ludwig_nb.data.errors``, ``.demo`` and ``.sources`` (a cell's cheap checks, before its
dashboard) do not import pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.data.demo import (
        DEMO_DATASETS,
        DEMO_PREFIX,
        demo_config,
        demo_dataset,
        demo_help,
    )
    from ludwig_nb.data.errors import DataError, DataWarning
    from ludwig_nb.data.loading import Dataset, check_dataset, load_dataset, load_table
    from ludwig_nb.data.splits import SPLIT_NAMES, sample_rows, split_dataset, split_rows

__all__ = [
    "DEMO_DATASETS",
    "DEMO_PREFIX",
    "SPLIT_NAMES",
    "DataError",
    "DataWarning",
    "Dataset",
    "check_dataset",
    "demo_config",
    "demo_dataset",
    "demo_help",
    "load_dataset",
    "load_table",
    "sample_rows",
    "split_dataset",
    "split_rows",
]

_HOMES = {
    "ludwig_nb.data.demo": (
        "DEMO_DATASETS",
        "DEMO_PREFIX",
        "demo_config",
        "demo_dataset",
        "demo_help",
    ),
    "ludwig_nb.data.errors": ("DataError", "DataWarning"),
    "ludwig_nb.data.loading": ("Dataset", "check_dataset", "load_dataset", "load_table"),
    "ludwig_nb.data.splits": ("SPLIT_NAMES", "sample_rows", "split_dataset", "split_rows"),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ludwig_nb.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
