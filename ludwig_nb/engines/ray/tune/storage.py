"""A trial's run folder on shared storage, and bringing its results home.

With a storage path a trial (on whichever node Tune placed it) writes its checkpoints,
model, statistics and log to ``<storage path>/<run id>``; when it ends the notebook copies
the model, the statistics and the log into the trial's run directory and leaves
``checkpoints/stored_at.json`` there naming where the checkpoints are (as a Ray Train run
with ``backend.storage_path`` does), so the model loads from the run directory and
``resume_from=<run dir>`` finds the checkpoints.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["TRIAL_LOG", "bring_home", "point_home", "trial_folder"]

#: the trial actor's prints and log records, in its run folder
TRIAL_LOG = "worker.log"
_HOME = ("training_statistics.json", TRIAL_LOG)


def trial_folder(storage_path: Path | None, run_dir: Path, run_id: str) -> Path:
    """Where the trial writes its run folder: on the storage, else the run directory."""
    if storage_path is None:
        return run_dir
    return Path(storage_path).expanduser().resolve() / run_id


def point_home(run_dir: Path, folder: Path) -> None:
    """Write ``<run_dir>/checkpoints/stored_at.json`` when the trial writes elsewhere."""
    from ludwig_nb.engines.ray.driver import STORED_AT
    from ludwig_nb.store.rundir import write_json_atomic

    if folder.resolve() == run_dir.resolve():
        return
    pointer = {"run_dir": str(folder), "checkpoints": str(folder / "checkpoints")}
    write_json_atomic(run_dir / "checkpoints" / STORED_AT, pointer)


def bring_home(folder: Path, run_dir: Path) -> None:
    """Copy the trial's model, statistics and log from ``folder`` into ``run_dir``.

    Raises:
        OSError: the storage cannot be read or the run directory written.
    """
    if folder.resolve() == run_dir.resolve():
        return
    if (folder / "model").is_dir():
        shutil.copytree(folder / "model", run_dir / "model", dirs_exist_ok=True)
    for name in _HOME:
        if (folder / name).is_file():
            shutil.copy2(folder / name, run_dir / name)
