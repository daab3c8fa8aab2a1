"""Where a Ludwig run puts its output under the run directory, and how ours points at it.

Shared by the engine (engine.py) and the training it runs (training.py); imports nothing
of Ludwig.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from ludwig_nb.engines.manifest import write_manifest

__all__ = [
    "EXPERIMENT",
    "MODEL_NAME",
    "NO_CHECKPOINT",
    "OUTPUT_DIR",
    "ludwig_logging_level",
    "point_run_at",
]

OUTPUT_DIR = "ludwig"  # under the run directory
EXPERIMENT, MODEL_NAME = "experiment", "run"  # Ludwig names its folder <experiment>_<model>
NO_CHECKPOINT = "No checkpoint was saved"  # Ludwig's error when a stop precedes any checkpoint


def point_run_at(run_dir: Path, model_dir: Path, statistics: Path | None) -> None:
    """Link the run directory's ``model`` to Ludwig's model folder.

    Make ``run_dir/model`` point at Ludwig's model folder (manifest) and copy Ludwig's training
    statistics next to it.
    """
    relative = os.path.relpath(model_dir, run_dir / "model")
    write_manifest(run_dir / "model", "ludwig", path=relative)
    if statistics is not None and statistics.is_file():
        shutil.copyfile(statistics, run_dir / "training_statistics.json")


def ludwig_logging_level() -> int:
    """Ludwig logs at WARNING in a run: its INFO tables and tqdm bars are for terminals."""
    return logging.WARNING
