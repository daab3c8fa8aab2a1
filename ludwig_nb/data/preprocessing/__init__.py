"""Per-feature preprocessing (Ludwig's rules), fitted on training data, saved as metadata."""

from ludwig_nb.data.preprocessing.pipeline import (
    INPUT_TYPES,
    METADATA_VERSION,
    OUTPUT_TYPES,
    Arrays,
    check_values,
    drop_missing_rows,
    fit_preprocessing,
    kept_rows,
    transform_frame,
)

__all__ = [
    "INPUT_TYPES",
    "METADATA_VERSION",
    "OUTPUT_TYPES",
    "Arrays",
    "check_values",
    "drop_missing_rows",
    "fit_preprocessing",
    "kept_rows",
    "transform_frame",
]
