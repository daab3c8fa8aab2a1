"""Runs: the ``Run`` handle, its worker thread, its run directory, and saved models."""

from ludwig_nb.runs.api import load_model, train
from ludwig_nb.runs.run import EventSubscription, Run
from ludwig_nb.runs.search import Search, hyperopt

__all__ = ["EventSubscription", "Run", "Search", "estimate", "hyperopt", "load_model", "train"]


def estimate(config, dataset, **kwargs):  # type: ignore[no-untyped-def]
    """Pre-flight prediction of a run's total time: see ``ludwig_nb.runs.preflight``."""
    from ludwig_nb.runs.preflight import estimate as _estimate

    return _estimate(config, dataset, **kwargs)
