"""ludwig_nb.data: dataset loading, splits, per-feature preprocessing, demo datasets.

Imports pandas and numpy, never torch.
"""

from ludwig_nb.data.demo import DEMO_DATASETS, DEMO_PREFIX, demo_config, demo_dataset, demo_help
from ludwig_nb.data.errors import DataError, DataWarning
from ludwig_nb.data.loading import Dataset, check_dataset, load_dataset, load_table
from ludwig_nb.data.preprocessing import (
    drop_missing_rows,
    fit_preprocessing,
    kept_rows,
    transform_frame,
)
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
    "drop_missing_rows",
    "fit_preprocessing",
    "kept_rows",
    "load_dataset",
    "load_table",
    "sample_rows",
    "split_dataset",
    "split_rows",
    "transform_frame",
]
