"""The rows of each split a run trains, validates and tests on (``Run.splits``).

Cut exactly as the engine cut them: the same split function and seed as the built-in engine
and the trivial baseline (``data.split_dataset`` with the run's seed), or the splits the run
was given. So ``run.model.evaluate(run.splits["test"])`` scores rows the model never trained on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ludwig_nb.engines.base import Engine, PreparedDataset, TrainJob, job_seed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SplitsUnavailable", "run_splits"]


class SplitsUnavailable(RuntimeError):
    """The run's splits cannot be given (its engine cuts its own, or it has no table)."""


def run_splits(engine: Engine, job: TrainJob) -> dict[str, pd.DataFrame]:
    """``{"training": ..., "validation": ..., "test": ...}`` of ``job`` (absent splits omitted).

    Each a DataFrame of the dataset's rows with the dataset's own index (so a row's label
    says which row it is), after ``sample_ratio`` / ``sample_size`` as the engine applies
    them. Raises :class:`SplitsUnavailable` when ``engine`` cuts its own splits
    (:attr:`Engine.shares_splits` False) and the run was not given them, and ``DataError``
    when the dataset cannot be read again.
    """
    from ludwig_nb.data import load_dataset, sample_rows, split_rows

    data: Any = job.dataset
    if isinstance(data, PreparedDataset):
        data = data.source  # read in another process: read it again here
    loaded = load_dataset(data)
    preprocessing = job.config.get("preprocessing") or {}
    if isinstance(loaded, dict):  # given split: the training rows are sampled as the engine does
        frames = dict(loaded)
        frames["training"] = sample_rows(frames["training"], preprocessing, job_seed(job))
        return frames
    if not engine.shares_splits:
        raise SplitsUnavailable(
            f"engine {engine.name} cuts its own splits, so ludwig_nb cannot name their rows; "
            "give the run its splits ({'training': ..., 'validation': ..., 'test': ...} or a "
            "'split' column with preprocessing.split.type: fixed) to evaluate on its test rows"
        )
    frame = sample_rows(loaded, preprocessing, job_seed(job))
    cut = split_rows(frame, preprocessing, job_seed(job))  # split_dataset's cut, index kept
    return {name: frame.iloc[rows] for name, rows in cut.items()}
