"""ludwig_nb.data: dataset loading, splits, per-feature preprocessing, demo datasets.

Imports pandas and numpy, never torch.
"""

from ludwig_nb.data.demo import DEMO_DATASETS, demo_config, demo_dataset
from ludwig_nb.data.errors import DataError, DataWarning
from ludwig_nb.data.loading import SPLIT_NAMES, Dataset, check_dataset, load_dataset, load_table
from ludwig_nb.data.preprocessing import (
    drop_missing_rows,
    fit_preprocessing,
    transform_frame,
)
from ludwig_nb.data.splits import sample_rows, split_dataset

__all__ = [
    "DEMO_DATASETS",
    "SPLIT_NAMES",
    "DataError",
    "DataWarning",
    "Dataset",
    "check_dataset",
    "demo_config",
    "demo_dataset",
    "drop_missing_rows",
    "fit_preprocessing",
    "load_dataset",
    "load_table",
    "sample_rows",
    "split_dataset",
    "transform_frame",
]
